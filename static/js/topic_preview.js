// Live preview of a topic's rule in Django admin: what it would tag, and what it
// would add to or remove from the topic's papers now. Served from /admin/.../preview/.
(function () {
  "use strict";

  function element(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  // 25,002 as the site's pages write counts (Django's intcomma).
  function count(number) {
    return Number(number).toLocaleString("en-US");
  }

  function paperList(title, papers, total, about) {
    var box = element("div", undefined, "preview-list");
    box.appendChild(element("h4", title + " (" + (about ? "about " : "") + count(total) + ")"));
    var list = element("ol");
    papers.forEach(function (paper) {
      var item = element("li");
      var link = element("a", paper.title);
      link.href = paper.url;
      link.target = "_blank";
      item.appendChild(element("span", paper.announced + " ", "preview-date"));
      item.appendChild(link);
      list.appendChild(item);
    });
    box.appendChild(list);
    return box;
  }

  function render(panel, data) {
    panel.replaceChildren();
    if (data.error) {
      panel.appendChild(element("p", "Invalid rule: " + data.error, "preview-error"));
      return;
    }
    if (data.notice) {
      panel.appendChild(element("p", data.notice, "preview-notice"));
      return;
    }
    // Past the preview's budget the counts are estimates (topics/preview.py).
    var about = data.unread > 0;
    var summary = element("p",
      "Matches " + (about ? "about " : "") + count(data.count) + " of " +
        count(data.scanned) + " papers (" + data.seconds + " s).",
      "preview-count");
    summary.title = count(data.checked) +
      " papers the search index could not decide were read in full.";
    panel.appendChild(summary);
    if (about) {
      panel.appendChild(element("p",
        "Estimated: the index could not decide " + count(data.checked + data.unread) +
          " papers, and the newest " + count(data.checked) + " were read. Saving the " +
          "rule tags exactly, in the background; a narrower word (ti: rather than " +
          "abs:) previews exactly.",
        "preview-notice"));
    }
    panel.appendChild(paperList("Latest matches", data.latest, data.count, about));
    if (data.added_count || data.removed_count) {
      if (data.retrains) {
        panel.appendChild(element("p",
          "Saving also retrains this topic's model on the rule's new matches, and " +
            "the model decides again: it may add or hold back papers the counts " +
            "below leave out.",
          "preview-notice"));
      }
      panel.appendChild(paperList("Saving it adds to the topic", data.added, data.added_count, about));
      panel.appendChild(paperList("Saving it removes from the topic", data.removed, data.removed_count, about));
    }
  }

  function previewUrl() {
    var match = window.location.pathname.match(/\/topic\/(\d+)\/change\//);
    var base = window.location.pathname.replace(/\/(\d+\/change|add)\/$/, "/");
    return match ? base + match[1] + "/preview/" : base + "preview/";
  }

  document.addEventListener("DOMContentLoaded", function () {
    var rule = document.getElementById("id_rule");
    if (!rule) return;
    var categories = document.getElementById("id_categories");
    var panel = element("div", undefined, "rule-preview");
    panel.setAttribute("aria-live", "polite");
    // Below the rule, not beside it: the rule keeps the field's whole width.
    (rule.closest(".flex-container") || rule).after(panel);
    var timer = null;
    var sequence = 0;
    // The request in flight, aborted as soon as the curator types again: the
    // server stops sending an answer nobody will read.
    var inFlight = null;

    function cancel() {
      if (inFlight) inFlight.abort();
      inFlight = null;
    }

    function refresh() {
      var params = new URLSearchParams({ rule: rule.value });
      if (categories) {
        Array.from(categories.selectedOptions).forEach(function (option) {
          params.append("categories", option.textContent.trim());
        });
      }
      cancel();
      var controller = new AbortController();
      inFlight = controller;
      // Only the latest request may render: an answer that arrives after a
      // newer request began is dropped even if it could not be aborted.
      var mine = ++sequence;
      panel.classList.add("loading");
      fetch(previewUrl() + "?" + params.toString(), {
        credentials: "same-origin",
        signal: controller.signal
      })
        .then(function (response) { return response.json(); })
        .then(function (data) { if (mine === sequence) render(panel, data); })
        .catch(function (error) {
          if (error.name !== "AbortError" && mine === sequence) {
            panel.textContent = "Preview unavailable.";
          }
        })
        .finally(function () {
          if (mine === sequence) {
            panel.classList.remove("loading");
            inFlight = null;
          }
        });
    }

    function later() {
      clearTimeout(timer);
      cancel();
      sequence++;  // whatever was asked before this keystroke is stale now
      timer = setTimeout(refresh, 600);
    }

    rule.addEventListener("input", later);
    if (categories) {
      // Admin's autocomplete (select2) tells of a change through jQuery only,
      // whose handlers also hear a plain select's own change.
      if (window.django && django.jQuery) django.jQuery(categories).on("change", later);
      else categories.addEventListener("change", later);
    }
    if (rule.value.trim()) refresh();
  });
})();
