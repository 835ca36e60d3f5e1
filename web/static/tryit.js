// tryit.js streams a run into the console's "Try it" panel. A form marked
// data-tryit-stream is posted with fetch and Accept: text/event-stream;
// the server answers with server-sent events whose data is HTML it
// rendered and escaped (event "run": the run's head, "event": one A2A
// event, "done": the run page's URL, whose content then replaces the
// live events, "failed": a message). Forms marked
// data-tryit-post (cancel) are posted in the background. Without this
// script every form still works as a plain post.
//
// EventSource is not used: it can only GET, and a message, a file and
// credentials belong in a POST body, never in a URL.
(function () {
  "use strict";

  // Credentials are typed once, in the compose form; a reply or cancel
  // sent from the same page carries them along. They stay in the inputs
  // and are never written anywhere else.
  function withCredentials(form) {
    var fd = new FormData(form);
    var creds = document.getElementById("tryit-creds");
    if (creds && !form.contains(creds)) {
      creds.querySelectorAll("input").forEach(function (el) {
        if (el.name && el.value && !fd.has(el.name)) {
          fd.append(el.name, el.value);
        }
      });
    }
    return fd;
  }

  // headers are the ones htmx sends (hx-headers on <body>: the CSRF
  // token), so a request the form parser cannot read (too large) is still
  // recognised as the console's own.
  function headers(extra) {
    var h = {};
    try {
      h = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
    } catch (e) {
      h = {};
    }
    Object.keys(extra).forEach(function (k) { h[k] = extra[k]; });
    return h;
  }

  function live() {
    return document.getElementById("tryit-live");
  }

  function handle(event, data) {
    var box = live();
    if (!box) {
      return;
    }
    if (event === "run") {
      box.innerHTML = data;
      wire(box);
    } else if (event === "event") {
      var list = document.getElementById("tryit-events");
      if (list) {
        list.insertAdjacentHTML("beforeend", data);
      }
    } else if (event === "done") {
      show(data);
    } else if (event === "failed") {
      var p = document.createElement("p");
      p.className = "error";
      p.textContent = data;
      box.appendChild(p);
    }
  }

  // fragment fetches a console page as a fragment (the server renders
  // only the page's body for HX-Request) and parses it; scripts in it do
  // not run, so nothing is wired twice.
  function fragment(url) {
    return fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" }).then(function (resp) {
      return resp.text();
    }).then(function (html) {
      var t = document.createElement("template");
      t.innerHTML = html;
      return t.content;
    });
  }

  // show puts the finished run's page (its result, transcript, reply box)
  // where the run was followed. On a run's own page (a reply) it replaces
  // that page's run view in place: putting it into the live box would
  // nest a second copy of the run inside the first. On the "Try it" page
  // it replaces the live events, and the "Past runs" table is read again
  // so it lists the run just made.
  function show(url) {
    var box = live();
    var page = box && box.closest("article.run");
    fragment(url).then(function (content) {
      var fresh = content.querySelector("article.run");
      if (page && fresh) {
        page.replaceWith(fresh);
        wire(fresh);
        if (window.location.pathname !== new URL(url, window.location.href).pathname) {
          window.history.replaceState(null, "", url);
        }
        return;
      }
      if (box) {
        box.replaceChildren.apply(box, Array.from(content.childNodes));
        wire(box);
      }
      var runs = document.getElementById("runs");
      if (runs && !runs.closest("#tryit-live")) {
        return fragment(window.location.pathname).then(function (tryPage) {
          var current = tryPage.getElementById("runs");
          if (current) {
            runs.replaceWith(current);
          }
        });
      }
    }).catch(function () {
      window.location.assign(url);
    });
  }

  // parse reads server-sent events (WHATWG HTML §9.2.6), enough of it for
  // what the console sends: event and data fields, blank-line dispatch.
  function parse(text, state) {
    state.buf += text;
    var lines = state.buf.split("\n");
    state.buf = lines.pop();
    lines.forEach(function (line) {
      if (line === "") {
        if (state.data.length) {
          handle(state.event || "message", state.data.join("\n"));
        }
        state.event = "";
        state.data = [];
        return;
      }
      var i = line.indexOf(":");
      var field = i < 0 ? line : line.slice(0, i);
      var value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "event") {
        state.event = value;
      } else if (field === "data") {
        state.data.push(value);
      }
    });
  }

  function stream(form) {
    var box = live();
    var button = form.querySelector("button[type=submit]");
    if (button) {
      button.disabled = true;
    }
    fetch(form.action, {
      method: "POST",
      body: withCredentials(form),
      headers: headers({ Accept: "text/event-stream" }),
      credentials: "same-origin",
    }).then(function (resp) {
      var type = resp.headers.get("Content-Type") || "";
      if (!resp.ok || type.indexOf("text/event-stream") !== 0) {
        // An error page: show its main content.
        return resp.text().then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var main = doc.getElementById("main");
          if (box) {
            box.replaceChildren.apply(box, main ? Array.from(main.childNodes) : []);
          }
        });
      }
      var reader = resp.body.getReader();
      var decoder = new TextDecoder();
      var state = { buf: "", event: "", data: [] };
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) {
            parse("\n\n", state);
            return;
          }
          parse(decoder.decode(r.value, { stream: true }), state);
          return pump();
        });
      }
      return pump();
    }).catch(function () {
      handle("failed", "The connection to the console was lost; the run's page has what was recorded.");
    }).finally(function () {
      if (button) {
        button.disabled = false;
      }
    });
  }

  function post(form) {
    fetch(form.action, { method: "POST", body: withCredentials(form), headers: headers({}), credentials: "same-origin" });
  }

  function wire(root) {
    root.querySelectorAll("form[data-tryit-stream]").forEach(function (form) {
      form.addEventListener("submit", function (e) {
        e.preventDefault();
        stream(form);
      });
    });
    root.querySelectorAll("form[data-tryit-post]").forEach(function (form) {
      form.addEventListener("submit", function (e) {
        e.preventDefault();
        post(form);
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { wire(document); });
  } else {
    wire(document);
  }
})();
