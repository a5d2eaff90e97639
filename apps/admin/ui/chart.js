// Tokens per minute, sent by the client vs received by the provider, drawn with uPlot (loaded
// before this module as a classic script, so `uPlot` is a global).
import { $ } from './format.js';

/** Created on the first draw, then fed new data. */
var chart = null;

export function renderChart(minutes) {
  var xs = minutes.map(function (b) {
    return b.at / 1000;
  });
  var data = [
    xs,
    minutes.map(function (b) {
      return b.tokens_before;
    }),
    minutes.map(function (b) {
      return b.tokens_after;
    }),
  ];
  var box = $('#chart');
  if (!chart) {
    chart = new uPlot(
      {
        width: box.clientWidth,
        height: 250,
        // At least half an hour wide, ending now: a fresh gateway's first minute is not a year-long axis.
        scales: {
          x: {
            time: true,
            range: function (u, min) {
              var now = Date.now() / 1000;
              return [Math.min(min || now, now - 1800), now + 60];
            },
          },
          y: {
            range: function (u, _min, max) {
              return [0, Math.max(1, max || 1) * 1.1];
            },
          },
        },
        series: [
          {},
          { label: 'sent by the client (tokens)', stroke: '#111', width: 2, points: { show: true, size: 7 } },
          {
            label: 'received by the provider (tokens)',
            stroke: '#111',
            dash: [6, 4],
            width: 2,
            points: { show: true, size: 7, fill: '#fff' },
          },
        ],
        axes: [{}, { size: 70 }],
      },
      data,
      box,
    );
    window.addEventListener('resize', function () {
      chart.setSize({ width: box.clientWidth, height: 250 });
    });
  } else {
    chart.setData(data);
  }
}
