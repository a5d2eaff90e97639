// Admin keys (`cg_adm_…`, one role each). Only an admin manages them; an operator cannot create keys.
import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { Static } from '@sinclair/typebox';
import { CurrentActor, Role, type Actor } from '../common/auth.guard';
import { TypeBoxPipe } from '../common/typebox.pipe';
import { IssueAdminKeyBody } from '../keys/keys.schemas';
import { KeysService } from '../keys/keys.service';

@Controller('v1/admin-keys')
@Role('admin')
export class AdminKeysController {
  constructor(private readonly keys: KeysService) {}

  @Post()
  issue(@CurrentActor() actor: Actor, @Body(new TypeBoxPipe(IssueAdminKeyBody)) body: Static<typeof IssueAdminKeyBody>) {
    return this.keys.issue(actor, null, body.role, body.label);
  }

  @Get()
  list() {
    return this.keys.list(null);
  }

  @Delete(':id')
  @HttpCode(200)
  revoke(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.keys.revoke(actor, null, id);
  }
}
