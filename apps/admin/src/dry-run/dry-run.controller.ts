import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { Type, type Static } from '@sinclair/typebox';
import { Role } from '../common/auth.guard';
import { TypeBoxPipe, checkName } from '../common/typebox.pipe';
import { DryRunService } from './dry-run.service';

const DryRunBody = Type.Object(
  {
    provider: Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('responses'), Type.Literal('gemini')]),
    /** The sample request body, as JSON or as its text. */
    body: Type.Union([Type.Object({}, { additionalProperties: true }), Type.String({ minLength: 1 })]),
    document: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.String({ minLength: 1 })])),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

@Controller('v1/tenants/:id/dry-run')
export class DryRunController {
  constructor(private readonly dryRun: DryRunService) {}

  @Post()
  @Role('viewer')
  @HttpCode(200)
  run(@Param('id') id: string, @Body(new TypeBoxPipe(DryRunBody)) body: Static<typeof DryRunBody>) {
    return this.dryRun.run(checkName('tenant id', id), body);
  }
}
