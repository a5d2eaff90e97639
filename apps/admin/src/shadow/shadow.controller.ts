import { Controller, Get, Param, Query } from '@nestjs/common';
import type { Static } from '@sinclair/typebox';
import { Role } from '../common/auth.guard';
import { TypeBoxPipe, checkName } from '../common/typebox.pipe';
import { ShadowQuery } from './shadow.schemas';
import { ShadowService } from './shadow.service';

@Controller('v1/tenants/:id/shadow')
export class ShadowController {
  constructor(private readonly shadow: ShadowService) {}

  /** → {tenant, active_version, candidate, comparisons}: candidate vs active on the same requests. */
  @Get()
  @Role('viewer')
  get(@Param('id') id: string, @Query(new TypeBoxPipe(ShadowQuery, 'query')) q: Static<typeof ShadowQuery>) {
    return this.shadow.get(checkName('tenant id', id), q);
  }
}
