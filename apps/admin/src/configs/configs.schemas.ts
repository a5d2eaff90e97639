import { Type } from '@sinclair/typebox';

export const PushConfigBody = Type.Object(
  {
    /** The pipeline document (same schema as CONFIG), as an object or as its YAML text. */
    document: Type.Union([Type.Object({}, { additionalProperties: true }), Type.String({ minLength: 1 })]),
    activate: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const DiffQuery = Type.Object({ from: Type.Integer({ minimum: 1 }), to: Type.Integer({ minimum: 1 }) });
