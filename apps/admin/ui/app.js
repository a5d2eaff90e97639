// The savings page: reads GET /v1/stats and GET /v1/replicas with the bearer token from the URL
// fragment (kept in this tab's sessionStorage, then removed from the address bar) and redraws
// every few seconds. No data is shown unless the API accepted the token.
import { renderChart } from './chart.js';
import { $, byTestId, fmt } from './format.js';
import { renderComponents, renderReplicas, renderSessions } from './tables.js';

var REFRESH_MS = 5000;
var WHOLE = '*';
var state = { token: readToken(), tenant: WHOLE, last: null };

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
  // Rewrites of cached bytes made on purpose (priced, docs/cache.md), apart from accidents.
  byTestId('planned-rewrites').textContent =
    fmt.int(num(s, 'planned_rewrites')) +
    ' (' +
    fmt.usd(num(s, 'planned_rewrite_cost_usd')) +
    ' → ' +
    fmt.usd(num(s, 'planned_rewrite_saving_per_turn_usd')) +
    ')';
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
  renderSessions(
    state.tenant === WHOLE
      ? d.stats.sessions
      : d.stats.sessions.filter(function (x) {
          return x.tenant === state.tenant;
        }),
  );
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
