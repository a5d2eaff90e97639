// The audit log, newest first, and the chain check.
import { Controller, Get, Query } from '@nestjs/common';
import { Type, type Static } from '@sinclair/typebox';
import { auditRepository } from '@context-guru/storage';
import { Role } from '../common/auth.guard';
import { ControlWriter } from '../common/control-writer';
import { TypeBoxPipe } from '../common/typebox.pipe';
import { auditView } from '../common/views';

const AuditQuery = Type.Object(
  {
    tenant: Type.Optional(Type.String({ maxLength: 64 })),
    action: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  { additionalProperties: false },
);

@Controller('v1/audit')
@Role('viewer')
export class AuditController {
  constructor(private readonly writer: ControlWriter) {}

  @Get()
  async list(@Query(new TypeBoxPipe(AuditQuery, 'query')) q: Static<typeof AuditQuery>) {
    return (await auditRepository.list(this.writer.sql, { tenant: q.tenant, action: q.action, limit: q.limit ?? 100 })).map(auditView);
  }

  /** → {ok, checked, first_bad_id?} */
  @Get('verify')
  async verify() {
    return auditRepository.verify(this.writer.sql, await this.writer.seal());
  }
}
