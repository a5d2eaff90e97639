import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { Type, type Static } from '@sinclair/typebox';
import { CurrentActor, Role, type Actor } from '../common/auth.guard';
import { TypeBoxPipe, checkName, checkVersion } from '../common/typebox.pipe';
import { FiltersService } from './filters.service';

const PutFilterBody = Type.Object(
  { yaml: Type.String({ minLength: 1 }), activate: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

@Controller('v1/tenants/:id/filters')
export class FiltersController {
  constructor(private readonly filters: FiltersService) {}

  /** → {version}: a new immutable version of the named set; `activate` defaults to false. */
  @Put(':name')
  @Role('admin')
  push(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('name') name: string,
    @Body(new TypeBoxPipe(PutFilterBody)) body: Static<typeof PutFilterBody>,
  ) {
    return this.filters.push(actor, checkName('tenant id', id), checkName('filter set name', name), body.yaml, body.activate ?? false);
  }

  @Get()
  @Role('viewer')
  list(@Param('id') id: string) {
    return this.filters.list(checkName('tenant id', id));
  }

  @Get(':name')
  @Role('viewer')
  get(@Param('id') id: string, @Param('name') name: string) {
    return this.filters.get(checkName('tenant id', id), checkName('filter set name', name));
  }

  @Post(':name/:v/activate')
  @Role('operator')
  @HttpCode(200)
  activate(@CurrentActor() actor: Actor, @Param('id') id: string, @Param('name') name: string, @Param('v') v: string) {
    return this.filters.activate(actor, checkName('tenant id', id), checkName('filter set name', name), checkVersion(v));
  }

  /** Deactivates the set (its versions stay in the history). */
  @Delete(':name')
  @Role('admin')
  @HttpCode(200)
  remove(@CurrentActor() actor: Actor, @Param('id') id: string, @Param('name') name: string) {
    return this.filters.remove(actor, checkName('tenant id', id), checkName('filter set name', name));
  }
}
