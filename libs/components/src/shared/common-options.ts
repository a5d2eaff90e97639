// Option fragments shared by several components, so one key means one thing everywhere.
import { Type } from '@sinclair/typebox';

export const MarkerModeOption = Type.Union([Type.Literal('full'), Type.Literal('summary'), Type.Literal('off')], {
  default: 'full',
});

export const NonNegInt = (def: number) => Type.Integer({ minimum: 0, default: def });
