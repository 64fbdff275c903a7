// perfbot serve: the history plot's hover, selection and zoom; the token;
// finding states and actions. No library: the pages work without it, this
// only adds interaction.
(function () {
  'use strict';
  var TOKEN_KEY = 'perfbot-token';

  function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

  function initToken() {
    var box = document.getElementById('tokenbox');
    var input = document.getElementById('token');
    if (!box || !input || !document.querySelector('#setstate, button.act')) return;
    box.hidden = false;
    input.value = token();
    input.addEventListener('change', function () { sessionStorage.setItem(TOKEN_KEY, input.value.trim()); });
  }

  // post sends a write with the token; it throws the server's message.
  function post(url, body) {
    return fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Authorization': 'Bearer ' + token() },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) {
        if (!r.ok) throw new Error((data.error || r.statusText) + (data.command ? ' Run: ' + data.command : ''));
        return data;
      });
    });
  }

  function initState() {
    var form = document.getElementById('setstate');
    if (!form) return;
    var msg = document.getElementById('statemsg');
    form.querySelectorAll('button[data-state]').forEach(function (b) {
      b.addEventListener('click', function () {
        msg.textContent = '...';
        post('/api/findings/' + form.dataset.culprit + '/state', { state: b.dataset.state, reason: document.getElementById('reason').value })
          .then(function (f) { document.getElementById('state').textContent = f.state; msg.textContent = 'saved'; })
          .catch(function (e) { msg.textContent = e.message; });
      });
    });
  }

  function initActions() {
    document.querySelectorAll('button.act').forEach(function (b) {
      b.addEventListener('click', function () {
        var msg = document.getElementById('actmsg');
        post('/api/actions', JSON.parse(b.dataset.action))
          .then(function (r) { msg.textContent = 'enqueued as ' + r.id + ': ' + r.command; })
          .catch(function (e) { msg.textContent = e.message; });
      });
    });
  }

  function fmt(x) { return (Math.round(x * 1e4) / 1e4).toString(); }
  function pct(x) { return (x > 0 ? '+' : '') + x.toFixed(1) + '%'; }

  function describe(p) {
    var s = p.short + ' ' + p.subject + '\nlevel ' + fmt(p.level) + ', median ' + fmt(p.median) +
      ' [' + fmt(p.median_lo) + ', ' + fmt(p.median_hi) + '], ' + p.runs + ' runs';
    if (p.new_chain) s += '\nnew chain (its reference left the history)';
    else if (p.ref) s += '\nstep ' + pct(p.step) + ' [' + pct(p.step_lo) + ', ' + pct(p.step_hi) + '] vs ' + p.ref.slice(0, 12) + ', p=' + fmt(p.p);
    return s;
  }

  function initHistory() {
    var fig = document.getElementById('historyfig');
    var svg = fig && fig.querySelector('svg.history');
    if (!svg) return;
    var hover = document.getElementById('hover');
    var from = +svg.dataset.from, to = +svg.dataset.to, left = +svg.dataset.left, slot = +svg.dataset.slot;
    var points = null, loading = null, selected = [], drag = null, brush = null;
    var el = document.getElementById('points');
    if (el) points = JSON.parse(el.textContent);

    // A long window's points come from the API when first needed.
    function load() {
      if (points) return Promise.resolve(points);
      if (!loading) {
        loading = fetch('/api/jobs/' + fig.dataset.job + '/history?' + fig.dataset.query + '&from=' + from + '&to=' + (to - 1))
          .then(function (r) { return r.json(); })
          .then(function (d) { points = d.points; return points; });
      }
      return loading;
    }
    function userPoint(ev) {
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      return pt.matrixTransform(svg.getScreenCTM().inverse());
    }
    function indexAt(ev) {
      var i = Math.floor((userPoint(ev).x - left) / slot);
      return i >= 0 && i < to - from ? i : -1;
    }
    function show(ev, i) {
      var r = fig.getBoundingClientRect();
      hover.textContent = describe(points[i]);
      hover.style.left = (ev.clientX - r.left + 14) + 'px';
      hover.style.top = (ev.clientY - r.top + 14) + 'px';
      hover.hidden = false;
    }
    svg.addEventListener('mousemove', function (ev) {
      if (drag) {
        var x = userPoint(ev).x;
        brush.setAttribute('x', Math.min(x, drag.x));
        brush.setAttribute('width', Math.abs(x - drag.x));
        return;
      }
      var i = indexAt(ev);
      if (i < 0) { hover.hidden = true; return; }
      if (points) show(ev, i);
      else load().then(function () { show(ev, i); });
    });
    svg.addEventListener('mouseleave', function () { hover.hidden = true; });
    svg.addEventListener('mousedown', function (ev) {
      ev.preventDefault();
      var p = userPoint(ev);
      drag = { x: p.x, i: indexAt(ev) };
      brush = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
      brush.setAttribute('class', 'brush');
      brush.setAttribute('x', p.x); brush.setAttribute('y', 0);
      brush.setAttribute('width', 0); brush.setAttribute('height', svg.viewBox.baseVal.height);
      svg.appendChild(brush);
    });
    window.addEventListener('mouseup', function (ev) {
      if (!drag) return;
      var d = drag;
      drag = null;
      brush.remove();
      var j = indexAt(ev);
      if (Math.abs(userPoint(ev).x - d.x) > 8 && d.i >= 0 && j >= 0 && d.i !== j) {
        var a = Math.min(d.i, j), b = Math.max(d.i, j);
        location.search = fig.dataset.query + '&from=' + (from + a) + '&to=' + (from + b);
      } else if (d.i >= 0) {
        load().then(function () { select(d.i); });
      }
    });

    function select(i) {
      if (selected.indexOf(i) >= 0) return;
      selected.push(i);
      if (selected.length > 2) selected.shift();
      svg.querySelectorAll('circle.pt.sel').forEach(function (c) { c.classList.remove('sel'); });
      selected.forEach(function (k) {
        var c = svg.querySelector('circle.pt[data-i="' + (from + k) + '"]');
        if (c) c.classList.add('sel');
      });
      var box = document.getElementById('selection');
      var ps = selected.slice().sort(function (a, b) { return a - b; }).map(function (k) { return points[k]; });
      document.getElementById('sel').textContent = ps.map(function (p) { return p.short; }).join(' and ');
      var link = document.getElementById('comparelink');
      link.hidden = ps.length < 2;
      var q = new URLSearchParams(fig.dataset.query);
      link.href = '/compare?job=' + encodeURIComponent(fig.dataset.job) + ps.map(function (p) { return '&c=' + p.commit; }).join('') +
        '&variant=' + encodeURIComponent(q.get('variant') || '') + '&metric=' + encodeURIComponent(q.get('metric') || '');
      box.hidden = false;
    }
    document.getElementById('clearsel').addEventListener('click', function () {
      selected = [];
      svg.querySelectorAll('circle.pt.sel').forEach(function (c) { c.classList.remove('sel'); });
      document.getElementById('selection').hidden = true;
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    initToken();
    initState();
    initActions();
    initHistory();
  });
})();
