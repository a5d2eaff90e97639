import { Type } from '@sinclair/typebox';
import { NAME_PATTERN } from '../common/typebox.pipe';

export const CreateTenantBody = Type.Object(
  { id: Type.String({ pattern: NAME_PATTERN }), name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const PatchTenantBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), disabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);
