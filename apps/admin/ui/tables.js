// The page's three tables: components with their top gates, recent sessions, and replicas with
// the config version each serves per tenant.
import { byTestId, fmt } from './format.js';

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

export function renderComponents(s) {
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

/** The sessions of the tenant on show (all of them for the whole gateway). */
export function renderSessions(sessions) {
  fillTable(
    'sessions',
    sessions.map(function (x) {
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

export function renderReplicas(r) {
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
