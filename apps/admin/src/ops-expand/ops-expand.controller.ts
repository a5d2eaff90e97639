import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { Type, type Static } from '@sinclair/typebox';
import { CurrentActor, Role, type Actor } from '../common/auth.guard';
import { NAME_PATTERN, TypeBoxPipe } from '../common/typebox.pipe';
import { OpsExpandService } from './ops-expand.service';

const OpsExpandBody = Type.Object(
  {
    tenant: Type.String({ pattern: NAME_PATTERN }),
    id: Type.String({ minLength: 1, maxLength: 80 }),
    reason: Type.String({ minLength: 3, maxLength: 500, pattern: '\\S' }),
  },
  { additionalProperties: false },
);

@Controller('v1/ops/expand')
export class OpsExpandController {
  constructor(private readonly ops: OpsExpandService) {}

  /** → {id, original} */
  @Post()
  @Role('operator')
  @HttpCode(200)
  expand(@CurrentActor() actor: Actor, @Body(new TypeBoxPipe(OpsExpandBody)) body: Static<typeof OpsExpandBody>) {
    return this.ops.expand(actor, body);
  }
}
