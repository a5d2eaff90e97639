import { Type } from '@sinclair/typebox';
import { ADMIN_ROLES } from '@context-guru/storage';

export const IssueTenantKeyBody = Type.Object({ label: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false });

export const IssueAdminKeyBody = Type.Object(
  { role: Type.Union(ADMIN_ROLES.map((r) => Type.Literal(r))), label: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);
