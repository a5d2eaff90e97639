// The built-in savings page: static files read once at boot and served without auth. The page
// itself holds no data: it calls the API with the bearer token it reads from the URL fragment,
// which browsers never send to a server.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Controller, Get, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { notFound } from '../common/admin-errors';
import { Role } from '../common/auth.guard';

interface Asset {
  type: string;
  body: Buffer;
}

/** apps/admin/ui, from src/ui (tests) and dist/ui (built) alike. */
const UI_DIR = path.resolve(__dirname, '..', '..', 'ui');
const UPLOT_DIR = path.dirname(require.resolve('uplot/dist/uPlot.iife.min.js'));

const asset = (file: string, type: string): Asset => ({ type, body: readFileSync(file) });

function loadAssets(): Map<string, Asset> {
  return new Map([
    ['index.html', asset(path.join(UI_DIR, 'index.html'), 'text/html; charset=utf-8')],
    // The page's own modules (app.js imports the others).
    ...['app.js', 'chart.js', 'format.js', 'tables.js'].map((js): [string, Asset] => [
      js,
      asset(path.join(UI_DIR, js), 'text/javascript; charset=utf-8'),
    ]),
    ['style.css', asset(path.join(UI_DIR, 'style.css'), 'text/css; charset=utf-8')],
    ['uPlot.iife.min.js', asset(path.join(UPLOT_DIR, 'uPlot.iife.min.js'), 'text/javascript; charset=utf-8')],
    ['uPlot.min.css', asset(path.join(UPLOT_DIR, 'uPlot.min.css'), 'text/css; charset=utf-8')],
  ]);
}

@Controller('ui')
@Role('public')
export class UiController {
  private readonly assets = loadAssets();

  @Get()
  index(@Res() reply: FastifyReply): void {
    this.send(reply, 'index.html');
  }

  @Get(':file')
  file(@Param('file') file: string, @Res() reply: FastifyReply): void {
    this.send(reply, file);
  }

  private send(reply: FastifyReply, name: string): void {
    const a = this.assets.get(name);
    if (!a) throw notFound(`ui file ${name}`);
    void reply
      .code(200)
      .header('content-type', a.type)
      .header('cache-control', 'no-cache')
      // Everything the page loads is its own: no inline script, no other origin.
      .header(
        'content-security-policy',
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
      )
      .header('referrer-policy', 'no-referrer')
      .send(a.body);
  }
}
