import { Module, type DynamicModule } from '@nestjs/common';
import { GATEWAY } from './gateway.tokens';
import type { GatewayContext } from './gateway-context';
import { OpsController } from './ops/ops.controller';

@Module({})
export class GatewayModule {
  static forRoot(gw: GatewayContext): DynamicModule {
    return { module: GatewayModule, controllers: [OpsController], providers: [{ provide: GATEWAY, useValue: gw }] };
  }
}
