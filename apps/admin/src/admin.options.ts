export const ADMIN_OPTIONS = Symbol('ADMIN_OPTIONS');

export interface AdminOptions {
  adminToken?: string;
}
