// GET /v1/tenants/{id}/savings: measured savings per config version (docs/holdout.md).
import { Controller, Get, Param, Query } from '@nestjs/common';
import type { Static } from '@sinclair/typebox';
import { Role } from '../common/auth.guard';
import { TypeBoxPipe, checkName } from '../common/typebox.pipe';
import { SavingsQuery } from './savings.schemas';
import { SavingsService } from './savings.service';

@Controller('v1/tenants/:id/savings')
@Role('viewer')
export class SavingsController {
  constructor(private readonly savings: SavingsService) {}

  @Get()
  get(@Param('id') id: string, @Query(new TypeBoxPipe(SavingsQuery, 'query')) q: Static<typeof SavingsQuery>) {
    return this.savings.get(checkName('tenant id', id), q.version);
  }
}
