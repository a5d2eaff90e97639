import { Type } from '@sinclair/typebox';

/** `?version=N`: one config version's figures instead of every version's. */
export const SavingsQuery = Type.Object({ version: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false });
