// Every live gateway replica, as it heartbeats into gateway_replicas.
import { Controller, Get } from '@nestjs/common';
import { readGeneration, replicasRepository } from '@context-guru/storage';
import { Role } from '../common/auth.guard';
import { ControlWriter } from '../common/control-writer';
import { replicaView } from '../common/views';

@Controller('v1/replicas')
@Role('viewer')
export class ReplicasController {
  constructor(private readonly writer: ControlWriter) {}

  @Get()
  async list() {
    const [generation, replicas] = await Promise.all([readGeneration(this.writer.sql), replicasRepository.live(this.writer.sql)]);
    return { generation, replicas: replicas.map(replicaView) };
  }
}
