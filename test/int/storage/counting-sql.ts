// A real SqlClient wrapped to count the statements it runs and to be switched off at will.
import type { Row, SqlClient, SqlQueryable } from '@context-guru/storage';

/** A real client that counts the statements it runs and can be switched off. */
export class CountingSql implements SqlClient {
  statements = 0;
  down = false;
  constructor(private readonly inner: SqlClient) {}
  get kind() {
    return this.inner.kind;
  }
  get exclusive() {
    return this.inner.exclusive;
  }
  async query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]> {
    this.statements++;
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    return this.inner.query<R>(text, params);
  }
  exec(text: string): Promise<void> {
    return this.inner.exec(text);
  }
  withConnection<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    return this.inner.withConnection(fn);
  }
  transaction<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    return this.inner.transaction(fn);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
