/**
 * The `/live` page: one self-contained HTML document (inline CSS and script, nothing fetched
 * but this platform's own `/live/plan`, `/live/events` and `/api/v2/login`). It holds no data:
 * it reads with a bearer token, taken from the URL's fragment (`/live#token=…`, which no
 * request carries, removed from the address bar at once) or from a login form (the password
 * grant), kept in the tab's sessionStorage. The stream is read with fetch (EventSource cannot
 * send a header) and reopened 2 s after it ends, so a stream the server dropped comes back. It draws the chosen floor as SVG
 * (rooms, zones, doors, sensors, hives), moves a marker per true person (filled red) and per
 * detection the platform ingested (hollow blue ring) as events arrive, and lists each room's measured vs true occupancy, the door counters, hive state and the
 * delivery ledger. Deterministic for a given event: no animation, no wall-clock text, so a
 * screenshot of a finished run is the same pixels every time (the golden-image test).
 */
export const LIVE_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>occusim live</title>
<style>
body{margin:0;font:13px/1.35 sans-serif;color:#222;background:#fff;display:grid;grid-template-columns:1fr 300px;grid-template-rows:auto 1fr;height:100vh}
header{grid-column:1/3;display:flex;gap:12px;align-items:center;padding:6px 10px;background:#1f2937;color:#fff}
header select{font:inherit}#at{font-family:monospace}
#plan{padding:8px;overflow:hidden}#plan svg{width:100%;height:100%}
aside{border-left:1px solid #ddd;padding:8px;overflow:auto}
h2{font-size:13px;margin:10px 0 4px}table{border-collapse:collapse;width:100%}td,th{padding:1px 4px;text-align:right}td:first-child,th:first-child{text-align:left}
.room{fill:#eef2f7;stroke:#64748b;stroke-width:.06}.zone{fill:none;stroke:#94a3b8;stroke-width:.04;stroke-dasharray:.2 .15}
.outline{fill:#f8fafc;stroke:#334155;stroke-width:.1}.door{stroke:#b45309;stroke-width:.18}
.sensor{fill:#0ea5e9}.sensor.traffic{fill:#a855f7}.hive{fill:#16a34a}.hive.off{fill:#dc2626}
.person{fill:#dc2626;stroke:#fff;stroke-width:.05}.detection{fill:none;stroke:#1d4ed8;stroke-width:.07}.label{font-size:.42px;fill:#334155}.count{font-size:.5px;font-weight:bold;fill:#0f172a}
.bad{color:#b91c1c;font-weight:bold}
#login:not([hidden]){position:fixed;inset:0;display:flex;align-items:center;justify-content:center;background:rgba(15,23,42,.55)}
#login div{background:#fff;padding:16px;display:grid;gap:8px;min-width:260px}#login-error{color:#b91c1c}
</style></head><body>
<header><b>occusim live</b><label>floor <select id="floor"></select></label><span id="at">waiting for the simulator…</span><span id="people"></span><span id="detections"></span></header>
<div id="plan"><svg id="svg" xmlns="http://www.w3.org/2000/svg"></svg></div>
<form id="login" hidden><div><b>Sign in to watch live</b><input id="login-user" autocomplete="username" placeholder="username"><input id="login-password" type="password" autocomplete="current-password" placeholder="password"><button>Sign in</button><span id="login-error"></span></div></form>
<aside><h2>Rooms: measured / true</h2><table id="rooms"></table><h2>Door counters (in / out)</h2><table id="doors"></table><h2>Hives</h2><table id="hives"></table><h2>Ledger</h2><table id="ledger"></table></aside>
<script>
(function () {
  var NS = 'http://www.w3.org/2000/svg';
  var svg = document.getElementById('svg');
  var plan = null, peopleLayer = null, detectionLayer = null, names = {};
  function el(tag, attrs, parent) { var e = document.createElementNS(NS, tag); for (var k in attrs) e.setAttribute(k, attrs[k]); if (parent) parent.appendChild(e); return e; }
  function pts(poly) { return poly.map(function (p) { return p[0] + ',' + p[1]; }).join(' '); }
  function rows(id, head, data) {
    var t = document.getElementById(id); t.innerHTML = '';
    var tr = t.insertRow(); head.forEach(function (h) { var th = document.createElement('th'); th.textContent = h; tr.appendChild(th); });
    data.forEach(function (r) { var row = t.insertRow(); r.forEach(function (v) { var c = row.insertCell(); if (v && v.bad) { c.className = 'bad'; v = v.text; } c.textContent = v; }); });
  }
  var timeFormat = null;
  function draw(p) {
    plan = p; svg.innerHTML = ''; names = {};
    svg.setAttribute('data-floor', p.floor ? p.floor.id : '');
    timeFormat = new Intl.DateTimeFormat('sv-SE', { timeZone: p.zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    var f = p.floor; if (!f) return;
    var xs = f.outline.map(function (q) { return q[0]; }), ys = f.outline.map(function (q) { return q[1]; });
    var minX = Math.min.apply(null, xs) - 0.5, minY = Math.min.apply(null, ys) - 0.5;
    svg.setAttribute('viewBox', minX + ' ' + minY + ' ' + (Math.max.apply(null, xs) - minX + 0.5) + ' ' + (Math.max.apply(null, ys) - minY + 0.5));
    el('polygon', { points: pts(f.outline), 'class': 'outline' }, svg);
    f.rooms.forEach(function (r) {
      names[r.id] = r.name;
      el('polygon', { points: pts(r.polygon), 'class': 'room', 'data-room': r.id }, svg);
      var cx = r.polygon.reduce(function (a, q) { return a + q[0]; }, 0) / r.polygon.length;
      var cy = r.polygon.reduce(function (a, q) { return a + q[1]; }, 0) / r.polygon.length;
      el('text', { x: cx, y: cy - 0.3, 'class': 'label', 'text-anchor': 'middle' }, svg).textContent = r.name;
      el('text', { x: cx, y: cy + 0.4, 'class': 'count', 'text-anchor': 'middle', id: 'count-' + r.id }, svg);
    });
    f.zones.forEach(function (z) { el('polygon', { points: pts(z.polygon), 'class': 'zone' }, svg); });
    f.doors.forEach(function (d) { el('line', { x1: d.line[0][0], y1: d.line[0][1], x2: d.line[1][0], y2: d.line[1][1], 'class': 'door' }, svg); });
    f.sensors.forEach(function (s) { names[s.id] = s.name; el('rect', { x: s.center[0] - 0.12, y: s.center[1] - 0.12, width: 0.24, height: 0.24, 'class': 'sensor ' + s.mode }, svg); });
    f.hives.forEach(function (h) { el('polygon', { points: [[h.position[0], h.position[1] - 0.3], [h.position[0] - 0.26, h.position[1] + 0.15], [h.position[0] + 0.26, h.position[1] + 0.15]].map(function (q) { return q.join(','); }).join(' '), 'class': 'hive', id: 'hive-' + h.id }, svg); });
    peopleLayer = el('g', { id: 'people-layer' }, svg);
    detectionLayer = el('g', { id: 'detection-layer' }, svg);
  }
  function update(e) {
    document.getElementById('at').textContent = timeFormat.format(new Date(e.atMs)) + ' ' + plan.zone + (e.final ? ' (simulated; run finished)' : ' (simulated)');
    document.body.setAttribute('data-at', String(e.atMs));
    if (e.final) document.body.setAttribute('data-final', 'true');
    document.getElementById('people').textContent = e.people.length + ' people on this floor';
    peopleLayer.innerHTML = '';
    e.people.forEach(function (p) { el('circle', { cx: p[1], cy: p[2], r: 0.22, 'class': 'person', 'data-person': p[0] }, peopleLayer); });
    detectionLayer.innerHTML = '';
    e.detections.forEach(function (d) { el('circle', { cx: d[0], cy: d[1], r: 0.32, 'class': 'detection' }, detectionLayer); });
    document.getElementById('detections').textContent = e.detections.length + (e.detectionsDropped > 0 ? ' (+' + e.detectionsDropped + ' not drawn)' : '') + ' detections';
    e.rooms.forEach(function (r) { var c = document.getElementById('count-' + r.id); if (c) { c.textContent = (r.measured === null ? '–' : r.measured) + ' / ' + r.true; c.setAttribute('data-minute', r.minuteMs === null ? '' : String(r.minuteMs)); } });
    rows('rooms', ['room', 'measured', 'true'], e.rooms.map(function (r) { var m = r.measured === null ? '–' : String(r.measured); return [names[r.id] || r.id, r.measured !== null && r.measured !== r.true ? { bad: true, text: m } : m, String(r.true)]; }));
    rows('doors', ['counter', 'in', 'out'], e.doors.map(function (d) { return [names[d.sensorId] || d.sensorId, String(d.in), String(d.out)]; }));
    rows('hives', ['hive', 'state'], e.hives.map(function (h) { var g = document.getElementById('hive-' + h.id); if (g) g.setAttribute('class', h.online ? 'hive' : 'hive off'); return [h.name, h.online ? 'online' : { bad: true, text: 'offline' }]; }));
    var l = e.ledger;
    rows('ledger', ['', ''], l ? [['batches processed', String(l.batchesProcessed)], ['packets processed', String(l.packetsProcessed)], ['duplicate batches', String(l.duplicateBatches)], ['dead letters', String(l.deadLettered)], ['occupancy events', String(l.eventsEmitted)]] : [['platform-wide: not shown to one of several organisations', '']]);
    document.body.setAttribute('data-ready', 'true');
  }
  var TOKEN_KEY = 'occusim.live.token', current = null, wanted = null;
  var fragment = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (fragment) { sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(fragment[1])); history.replaceState(null, '', location.pathname + location.search); }
  function headers() { return { authorization: 'Bearer ' + (sessionStorage.getItem(TOKEN_KEY) || '') }; }
  function signIn(message) {
    if (current) current.abort();
    current = null;
    document.getElementById('login-error').textContent = message || '';
    document.getElementById('login').hidden = false;
  }
  document.getElementById('login').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var body = JSON.stringify({ username: document.getElementById('login-user').value, password: document.getElementById('login-password').value });
    fetch('/api/v2/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: body }).then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }); }).then(function (a) {
      if (!a.ok) { signIn(a.j.error_description || 'sign-in refused'); return; }
      sessionStorage.setItem(TOKEN_KEY, a.j.access_token);
      document.getElementById('login').hidden = true;
      open(wanted);
    });
  });
  function stream(floorId, ctrl) {
    fetch('/live/events?floor=' + encodeURIComponent(floorId), { headers: headers(), signal: ctrl.signal }).then(function (r) {
      if (r.status === 401) { signIn('your session has ended: sign in again'); return; }
      if (!r.ok || !r.body) throw new Error('HTTP ' + r.status);
      var reader = r.body.getReader(), decoder = new TextDecoder(), buf = '';
      function pump() {
        return reader.read().then(function (c) {
          if (c.done) throw new Error('stream ended');
          buf += decoder.decode(c.value, { stream: true });
          var i;
          while ((i = buf.indexOf('\\n\\n')) >= 0) {
            var data = buf.slice(0, i).split('\\n').filter(function (x) { return x.indexOf('data: ') === 0; }).map(function (x) { return x.slice(6); }).join('\\n');
            buf = buf.slice(i + 2);
            if (data && current === ctrl) update(JSON.parse(data));
          }
          return pump();
        });
      }
      return pump();
    }).catch(function () { setTimeout(function () { if (current === ctrl) stream(floorId, ctrl); }, 2000); });
  }
  function open(floorId) {
    wanted = floorId;
    if (current) current.abort();
    var ctrl = current = new AbortController();
    document.body.removeAttribute('data-ready');
    fetch('/live/plan' + (floorId ? '?floor=' + encodeURIComponent(floorId) : ''), { headers: headers(), signal: ctrl.signal }).then(function (r) {
      if (r.status === 401) { signIn(sessionStorage.getItem(TOKEN_KEY) ? 'your session has ended: sign in again' : ''); return null; }
      return r.json();
    }).then(function (p) {
      if (!p || current !== ctrl) return;
      var sel = document.getElementById('floor');
      sel.innerHTML = '';
      p.floors.forEach(function (f) { var o = document.createElement('option'); o.value = f.id; o.textContent = f.name; if (p.floor && f.id === p.floor.id) o.selected = true; sel.appendChild(o); });
      draw(p);
      if (p.floor) stream(p.floor.id, ctrl);
    }, function () {});
  }
  document.getElementById('floor').addEventListener('change', function (ev) { history.replaceState(null, '', '?floor=' + ev.target.value); open(ev.target.value); });
  open(new URLSearchParams(location.search).get('floor'));
})();
</script></body></html>`;
