import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { Static } from '@sinclair/typebox';
import { CurrentActor, Role, type Actor } from '../common/auth.guard';
import { TypeBoxPipe, checkName, checkVersion } from '../common/typebox.pipe';
import { DiffQuery, PushConfigBody } from './configs.schemas';
import { ConfigsService } from './configs.service';

@Controller('v1/tenants/:id/configs')
export class ConfigsController {
  constructor(private readonly configs: ConfigsService) {}

  /** → {version}: a new immutable version; `activate` defaults to false. */
  @Post()
  @Role('admin')
  push(@CurrentActor() actor: Actor, @Param('id') id: string, @Body(new TypeBoxPipe(PushConfigBody)) body: Static<typeof PushConfigBody>) {
    return this.configs.push(actor, checkName('tenant id', id), body.document, body.activate ?? false);
  }

  @Get()
  @Role('viewer')
  list(@Param('id') id: string) {
    return this.configs.list(checkName('tenant id', id));
  }

  @Get('active')
  @Role('viewer')
  active(@Param('id') id: string) {
    return this.configs.active(checkName('tenant id', id));
  }

  @Get('diff')
  @Role('viewer')
  diff(@Param('id') id: string, @Query(new TypeBoxPipe(DiffQuery, 'query')) q: Static<typeof DiffQuery>) {
    return this.configs.diff(checkName('tenant id', id), q.from, q.to);
  }

  @Get(':v')
  @Role('viewer')
  get(@Param('id') id: string, @Param('v') v: string) {
    return this.configs.get(checkName('tenant id', id), checkVersion(v));
  }

  /** Activation; rollback = activating an earlier version. */
  @Post(':v/activate')
  @Role('operator')
  @HttpCode(200)
  activate(@CurrentActor() actor: Actor, @Param('id') id: string, @Param('v') v: string) {
    return this.configs.activate(actor, checkName('tenant id', id), checkVersion(v));
  }
}
