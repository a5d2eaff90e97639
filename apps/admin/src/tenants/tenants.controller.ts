import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import type { Static } from '@sinclair/typebox';
import { CurrentActor, Role, type Actor } from '../common/auth.guard';
import { TypeBoxPipe, checkName } from '../common/typebox.pipe';
import { CreateTenantBody, PatchTenantBody } from './tenants.schemas';
import { ErasureService } from './erasure.service';
import { TenantsService } from './tenants.service';

@Controller('v1/tenants')
export class TenantsController {
  constructor(
    private readonly tenants: TenantsService,
    private readonly erasure: ErasureService,
  ) {}

  @Post()
  @Role('admin')
  create(@CurrentActor() actor: Actor, @Body(new TypeBoxPipe(CreateTenantBody)) body: Static<typeof CreateTenantBody>) {
    return this.tenants.create(actor, body);
  }

  @Get()
  @Role('viewer')
  list() {
    return this.tenants.list();
  }

  @Get(':id')
  @Role('viewer')
  get(@Param('id') id: string) {
    return this.tenants.get(checkName('tenant id', id));
  }

  @Patch(':id')
  @Role('admin')
  patch(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body(new TypeBoxPipe(PatchTenantBody)) body: Static<typeof PatchTenantBody>,
  ) {
    return this.tenants.patch(actor, checkName('tenant id', id), body);
  }

  /** Disables (keys stop working) and erases what the tenant sent; the control-plane history stays. */
  @Delete(':id')
  @Role('admin')
  @HttpCode(200)
  remove(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.erasure.eraseTenant(actor, checkName('tenant id', id));
  }

  /** Erases one session of the tenant (its originals, state and turn records). */
  @Delete(':id/sessions/:session')
  @Role('admin')
  @HttpCode(200)
  eraseSession(@CurrentActor() actor: Actor, @Param('id') id: string, @Param('session') session: string) {
    return this.erasure.eraseSession(actor, checkName('tenant id', id), session);
  }
}
