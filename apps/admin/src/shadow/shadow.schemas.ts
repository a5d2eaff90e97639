import { Type } from '@sinclair/typebox';

/** Narrows the comparisons to one active and/or one candidate version. */
export const ShadowQuery = Type.Object(
  {
    active: Type.Optional(Type.Integer({ minimum: 1 })),
    candidate: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
