import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { Static } from '@sinclair/typebox';
import { CurrentActor, Role, type Actor } from '../common/auth.guard';
import { TypeBoxPipe, checkName } from '../common/typebox.pipe';
import { IssueTenantKeyBody } from './keys.schemas';
import { KeysService } from './keys.service';

@Controller('v1/tenants/:id/keys')
@Role('admin')
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  /** → {id, key, prefix, …}: the key is in this answer only. */
  @Post()
  issue(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body(new TypeBoxPipe(IssueTenantKeyBody)) body: Static<typeof IssueTenantKeyBody>,
  ) {
    return this.keys.issue(actor, checkName('tenant id', id), 'tenant', body.label);
  }

  @Get()
  list(@Param('id') id: string) {
    return this.keys.list(checkName('tenant id', id));
  }

  @Delete(':keyId')
  @HttpCode(200)
  revoke(@CurrentActor() actor: Actor, @Param('id') id: string, @Param('keyId') keyId: string) {
    return this.keys.revoke(actor, checkName('tenant id', id), keyId);
  }
}
