// The savings page: reads GET /v1/stats and GET /v1/replicas with the bearer token from the URL
// fragment (kept in this tab's sessionStorage, then removed from the address bar) and redraws
// every few seconds. No data is shown unless the API accepted the token.
(function () {
  'use strict';
  var REFRESH_MS = 5000;
  var WHOLE = '*';
  var state = { token: readToken(), tenant: WHOLE, chart: null, last: null };

  function readToken() {
    var m = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
    if (m) {
      var t = decodeURIComponent(m[1]);
      sessionStorage.setItem('cg-admin-token', t);
      history.replaceState(null, '', location.pathname + location.search);
      return t;
    }
    return sessionStorage.getItem('cg-admin-token');
  }

  function $(sel) {
    return document.querySelector(sel);
  }
  function byTestId(id) {
    return document.querySelector('[data-testid="' + id + '"]');
  }

  var fmt = {
    int: function (n) {
      return Math.round(n).toLocaleString('en-US');
    },
    tokens: function (n) {
      return fmt.int(n) + ' tokens';
    },
    usd: function (n) {
      return '$' + n.toFixed(n >= 100 ? 2 : 4);
    },
    pct: function (part, whole) {
      return whole > 0 ? ((part / whole) * 100).toFixed(1) + ' %' : '0.0 %';
    },
    ms: function (n) {
      return n.toFixed(2) + ' ms';
    },
    time: function (ms) {
      return new Date(ms).toLocaleTimeString('en-GB');
    },
  };

  function problem(text) {
    var p = $('#problem');
    p.textContent = text;
    p.hidden = false;
    $('#data').hidden = true;
  }

  function api(path) {
    return fetch(path, { headers: { authorization: 'Bearer ' + state.token }, cache: 'no-store' }).then(function (res) {
      return res
        .json()
        .catch(function () {
          return {};
        })
        .then(function (body) {
          if (res.ok) return body;
          var code = body && body.error ? body.error.code : String(res.status);
          var err = new Error(code);
          err.status = res.status;
          err.detail = body && body.error ? body.error.message : '';
          throw err;
        });
    });
  }

  /** The whole gateway: counts summed over tenants, means weighted by requests. */
  function combined(tenants) {
    var out = { requests: 0, components: {} };
    tenants.forEach(function (t) {
      var s = t.stats;
      Object.keys(s).forEach(function (k) {
        if (typeof s[k] === 'number' && !/_avg$|_pct/.test(k)) out[k] = (out[k] || 0) + s[k];
      });
      out.cg_added_ms_sum = (out.cg_added_ms_sum || 0) + (s.cg_added_ms_avg || 0) * (s.requests || 0);
      Object.keys(s.components || {}).forEach(function (name) {
        var c = s.components[name];
        var into = out.components[name] || (out.components[name] = { runs: 0, acted: 0, saved_tokens: 0, gates: {} });
        into.runs += c.runs;
        into.acted += c.acted;
        into.saved_tokens += c.saved_tokens;
        Object.keys(c.gates || {}).forEach(function (g) {
          into.gates[g] = (into.gates[g] || 0) + c.gates[g];
        });
      });
    });
    out.cg_added_ms_avg = out.requests ? out.cg_added_ms_sum / out.requests : 0;
    var priced = tenants.filter(function (t) {
      return t.stats.money;
    });
    if (priced.length) {
      out.money = { bill_with_usd: 0, bill_without_usd: 0 };
      priced.forEach(function (t) {
        out.money.bill_with_usd += t.stats.money.bill_with_usd || 0;
        out.money.bill_without_usd += t.stats.money.bill_without_usd || 0;
      });
    }
    return out;
  }

  function selected(data) {
    if (state.tenant === WHOLE) return { stats: combined(data.tenants), minutes: data.minutes };
    var t = data.tenants.filter(function (x) {
      return x.id === state.tenant;
    })[0];
    return t ? { stats: t.stats, minutes: t.minutes } : { stats: combined([]), minutes: [] };
  }

  function num(s, k) {
    return typeof s[k] === 'number' ? s[k] : 0;
  }

  function renderCards(s) {
    var before = num(s, 'tokens_before');
    var after = num(s, 'tokens_after');
    byTestId('requests').textContent = fmt.int(num(s, 'requests'));
    byTestId('tokens-before').textContent = fmt.tokens(before);
    byTestId('tokens-after').textContent = fmt.tokens(after);
    byTestId('saved-tokens').textContent = fmt.tokens(before - after) + ' (' + fmt.pct(before - after, before) + ')';
    var money = s.money || {};
    var billed = money.bill_with_usd;
    var without = money.bill_without_usd;
    byTestId('billed-cost').textContent = typeof billed === 'number' ? fmt.usd(billed) : 'not reported';
    byTestId('cost-without').textContent = typeof without === 'number' ? fmt.usd(without) : 'not reported';
    byTestId('holdout').textContent = holdoutText(s.holdout);
    var read = num(s, 'cache_read_tokens');
    var write = num(s, 'cache_write_tokens');
    var fresh = num(s, 'fresh_input_tokens');
    var all = read + write + fresh;
    byTestId('cache-share').textContent = fmt.pct(read, all) + ' / ' + fmt.pct(write, all) + ' / ' + fmt.pct(fresh, all);
    byTestId('fail-open').textContent = fmt.int(num(s, 'fail_open'));
    byTestId('expand-rounds').textContent = fmt.int(num(s, 'expand_rounds'));
    byTestId('stash-misses').textContent = fmt.int(num(s, 'stash_misses'));
    byTestId('guard-reverts').textContent = fmt.int(num(s, 'cache_guard_reverts'));
    byTestId('added-ms').textContent = fmt.ms(num(s, 'cg_added_ms_avg'));
  }

  // "saved 28.4 % ± 5.2 % (412 sessions)", or what stands between the tenant and that line.
  function holdoutText(h) {
    if (!h) return 'no holdout configured';
    var sessions = ' (' + fmt.int(h.sessions || 0) + ' sessions)';
    if (typeof h.saving_pct !== 'number' || typeof h.interval_pct !== 'number') return 'measuring' + sessions;
    var figure = h.saving_pct.toFixed(1) + ' % ± ' + h.interval_pct.toFixed(1) + ' %';
    return (h.significant ? '' : 'not yet significant: ') + figure + sessions;
  }

  function cell(text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  function fillTable(id, rows, empty) {
    var body = byTestId(id).querySelector('tbody');
    body.textContent = '';
    if (!rows.length) {
      var tr = document.createElement('tr');
      var td = cell(empty);
      td.colSpan = byTestId(id).querySelectorAll('th').length;
      tr.appendChild(td);
      body.appendChild(tr);
      return;
    }
    rows.forEach(function (cells) {
      var tr = document.createElement('tr');
      cells.forEach(function (c) {
        tr.appendChild(c);
      });
      body.appendChild(tr);
    });
  }

  function renderComponents(s) {
    var names = Object.keys(s.components || {}).sort();
    fillTable(
      'components',
      names.map(function (name) {
        var c = s.components[name];
        var gates = Object.keys(c.gates || {})
          .sort(function (a, b) {
            return c.gates[b] - c.gates[a];
          })
          .slice(0, 3);
        return [
          cell(name, 'id'),
          cell(fmt.int(c.runs), 'num'),
          cell(fmt.int(c.acted), 'num'),
          cell(fmt.int(c.runs - c.acted), 'num'),
          cell(fmt.tokens(c.saved_tokens), 'num'),
          cell(
            gates
              .map(function (g) {
                return g + ' ×' + c.gates[g];
              })
              .join(', ') || '—',
          ),
        ];
      }),
      'no component has run yet',
    );
  }

  function renderSessions(sessions) {
    var shown =
      state.tenant === WHOLE
        ? sessions
        : sessions.filter(function (x) {
            return x.tenant === state.tenant;
          });
    fillTable(
      'sessions',
      shown.map(function (x) {
        return [
          cell(x.session.length > 24 ? x.session.slice(0, 24) + '…' : x.session, 'id'),
          cell(x.tenant),
          cell(fmt.int(x.turns), 'num'),
          cell(fmt.int(x.tokens_before) + ' → ' + fmt.int(x.tokens_after), 'num'),
          cell(fmt.pct(x.tokens_before - x.tokens_after, x.tokens_before), 'num'),
          cell(fmt.time(x.last_seen)),
        ];
      }),
      'no session yet',
    );
  }

  function renderReplicas(r) {
    fillTable(
      'replicas',
      (r.replicas || []).map(function (x) {
        var versions = Object.keys(x.tenant_versions || {})
          .sort()
          .map(function (t) {
            return t + ' v' + x.tenant_versions[t];
          })
          .join(', ');
        return [cell(x.id, 'id'), cell(String(x.generation), 'num'), cell(versions || '—'), cell(fmt.time(Date.parse(x.heartbeat_at)))];
      }),
      'no replica has reported (generation ' + r.generation + ')',
    );
  }

  function renderChart(minutes) {
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
    if (!state.chart) {
      state.chart = new uPlot(
        {
          width: box.clientWidth,
          height: 250,
          // At least half an hour wide, ending now: a fresh gateway's first minute is not a year-long axis.
          scales: {
            x: {
              time: true,
              range: function (u, min, max) {
                var now = Date.now() / 1000;
                return [Math.min(min || now, now - 1800), now + 60];
              },
            },
            y: {
              range: function (u, min, max) {
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
        state.chart.setSize({ width: box.clientWidth, height: 250 });
      });
    } else {
      state.chart.setData(data);
    }
  }

  function renderTenants(data) {
    var select = $('#tenant');
    var ids = data.tenants.map(function (t) {
      return t.id;
    });
    var have = Array.prototype.map
      .call(select.options, function (o) {
        return o.value;
      })
      .slice(1);
    if (have.join('\n') === ids.join('\n')) return;
    while (select.options.length > 1) select.remove(1);
    ids.forEach(function (id) {
      select.add(new Option('tenant ' + id, id));
    });
    select.value = ids.indexOf(state.tenant) >= 0 ? state.tenant : WHOLE;
  }

  function render() {
    var d = state.last;
    if (!d) return;
    renderTenants(d.stats);
    var view = selected(d.stats);
    renderCards(view.stats);
    renderChart(view.minutes);
    renderComponents(view.stats);
    renderSessions(d.stats.sessions);
    renderReplicas(d.replicas);
    $('#updated').textContent = 'updated ' + fmt.time(Date.parse(d.stats.generated_at));
    $('#data').setAttribute('aria-busy', 'false');
    $('#data').hidden = false;
    $('#problem').hidden = true;
  }

  function refresh() {
    Promise.all([api('/v1/stats'), api('/v1/replicas')])
      .then(
        function (r) {
          state.last = { stats: r[0], replicas: r[1] };
          render();
        },
        function (err) {
          if (err.status === 401 || err.status === 403) {
            problem(
              'The admin API refused this token (' +
                err.status +
                ' ' +
                err.message +
                '). Open the URL the gateway printed at start-up, or add #token=<ADMIN_TOKEN> to this address.',
            );
            return 'stop';
          }
          if (err.message === 'stats_unavailable') {
            problem(
              'This admin runs apart from the gateway, so it has no figures to show: read /stats on each gateway replica, or the Grafana dashboards.',
            );
            return 'stop';
          }
          // A passing failure: keep the last figures on screen and say so.
          $('#updated').textContent = 'refresh failed (' + err.message + '), retrying';
        },
      )
      .then(function (outcome) {
        if (outcome !== 'stop') setTimeout(refresh, REFRESH_MS);
      });
  }

  $('#tenant').addEventListener('change', function (e) {
    state.tenant = e.target.value;
    render();
  });
  if (!state.token)
    problem('No token: open the URL the gateway printed at start-up (…/ui/#token=…), or add #token=<ADMIN_TOKEN> to this address.');
  else refresh();
})();
