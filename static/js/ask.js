// Ask pages: stream the language model's answer when one is configured.
// Without this script the server renders the whole answer. Model output is
// only ever inserted as text (textContent), never as HTML.
(function () {
  "use strict";

  function askForStream() {
    var form = document.querySelector("form[data-ask-form][data-stream]");
    if (!form) return;
    form.addEventListener("submit", function () {
      if (form.querySelector("input[name=stream]")) return;
      var flag = document.createElement("input");
      flag.type = "hidden";
      flag.name = "stream";
      flag.value = "1";
      form.appendChild(flag);
    });
  }

  function citationLink(number, sources) {
    var link = document.createElement("a");
    link.className = "cite";
    link.textContent = "[" + number + "]";
    var source = sources[number];
    if (source) {
      link.href = source.url;
      link.title = source.title;
    }
    return link;
  }

  function sourcesFromPage() {
    var sources = {};
    document.querySelectorAll("ol.retrieved > li").forEach(function (item) {
      var link = item.querySelector("a");
      sources[item.value] = { url: link.getAttribute("href"), title: link.textContent };
    });
    return sources;
  }

  function appendCitations(container, numbers, sources) {
    numbers.forEach(function (number) {
      container.append(" ", citationLink(number, sources));
    });
  }

  function appendClaim(container, claim, sources) {
    var text = document.createElement("span");
    text.className = "claim";
    text.textContent = claim.text;
    container.appendChild(text);
    appendCitations(container, claim.citations, sources);
    container.append(" ");
  }

  function showCited(cited) {
    var box = document.querySelector("[data-cited]");
    var list = document.querySelector("[data-cited-list]");
    if (!box || !list || !cited.length) return;
    cited.forEach(function (source) {
      var item = document.createElement("li");
      item.value = source.number;
      var link = document.createElement("a");
      link.href = source.url;
      link.textContent = source.title;
      item.appendChild(link);
      if (source.label) {
        var label = document.createElement("span");
        label.className = "meta";
        label.textContent = " " + source.label;
        item.appendChild(label);
      }
      list.appendChild(item);
    });
    box.hidden = false;
  }

  function handle(name, data, body, sources) {
    if (name === "claim") {
      appendClaim(body.querySelector("[data-claims]"), data, sources);
    } else if (name === "fallback") {
      // The offline answer replaces what the model had sent before it failed.
      body.querySelector("[data-claims]").replaceChildren();
      var box = body.querySelector("[data-fallback]");
      body.querySelector("[data-notice]").textContent = data.notice;
      var lead = box.querySelector("[data-fallback-lead]");
      lead.replaceChildren();
      data.lead_parts.forEach(function (part) {
        lead.append(part.text);
        appendCitations(lead, part.citations, sources);
      });
      var claims = box.querySelector("[data-fallback-claims]");
      data.claims.forEach(function (claim) {
        var item = document.createElement("li");
        appendClaim(item, claim, sources);
        claims.appendChild(item);
      });
      box.hidden = false;
    } else if (name === "done") {
      showCited(data.cited);
      if (data.cited.length) {
        var attribution = body.querySelector("[data-attribution]");
        attribution.textContent = data.attribution;
        attribution.hidden = false;
      }
    }
  }

  // Server-sent events arrive as "event: name\ndata: {json}\n\n" blocks.
  function parseBlocks(buffer, onEvent) {
    var blocks = buffer.split("\n\n");
    var rest = blocks.pop();
    blocks.forEach(function (block) {
      var name = "message";
      var data = "";
      block.split("\n").forEach(function (line) {
        if (line.indexOf("event: ") === 0) name = line.slice(7);
        else if (line.indexOf("data: ") === 0) data += line.slice(6);
      });
      if (data) onEvent(name, JSON.parse(data));
    });
    return rest;
  }

  function stream(body) {
    var status = body.querySelector("[data-stream-status]");
    var sources = sourcesFromPage();
    var onEvent = function (name, data) {
      status.textContent = "";
      handle(name, data, body, sources);
    };
    fetch(body.dataset.streamUrl, { headers: { Accept: "text/event-stream" } })
      .then(function (response) {
        if (!response.ok || !response.body) {
          throw new Error("Momentum answered " + response.status);
        }
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) {
              parseBlocks(buffer + "\n\n", onEvent);
              status.textContent = "";
              return;
            }
            buffer = parseBlocks(buffer + decoder.decode(chunk.value, { stream: true }), onEvent);
            return pump();
          });
        }
        return pump();
      })
      .catch(function (error) { broken(body, status, error); });
  }

  // A stream that broke off: say so plainly, keep what arrived, and offer it
  // again, or the answer made without the language model.
  function broken(body, status, error) {
    // fetch() rejects with a TypeError when no answer came at all.
    var why = error instanceof TypeError ? "the connection was lost" : error.message;
    status.textContent = "The answer could not be loaded (" + why + "): ";
    var again = document.createElement("button");
    again.type = "button";
    again.className = "secondary small";
    again.textContent = "Try again";
    again.addEventListener("click", function () {
      // What arrived before the break goes: the answer comes again whole.
      body.querySelectorAll("[data-claims], [data-fallback-claims]").forEach(function (node) {
        node.replaceChildren();
      });
      body.querySelector("[data-fallback]").hidden = true;
      body.querySelector("[data-attribution]").hidden = true;
      var cited = document.querySelector("[data-cited]");
      if (cited) {
        cited.hidden = true;
        document.querySelector("[data-cited-list]").replaceChildren();
      }
      status.textContent = "Waiting for the language model…";
      stream(body);
    });
    var without = document.createElement("a");
    var params = new URLSearchParams(window.location.search);
    params.delete("stream");
    params.set("offline", "1");
    without.href = "?" + params.toString();
    without.textContent = "the answer without the language model";
    status.append(again, " or ", without, ".");
  }

  document.addEventListener("DOMContentLoaded", function () {
    askForStream();
    var body = document.querySelector("[data-stream-url]");
    if (body) stream(body);
  });
})();
