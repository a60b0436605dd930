// Momentum's few behaviours, on top of pages that work without JavaScript:
// follow/save buttons submit in place, and the keyboard moves through papers.
"use strict";

(function () {
  const csrf = () => {
    const input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  };

  // --- Follow / save buttons -------------------------------------------------
  async function submitToggle(form) {
    const button = form.querySelector("button");
    const wanted = form.elements.on.value === "1";
    button.disabled = true;
    try {
      const response = await fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        headers: { Accept: "application/json", "X-CSRFToken": csrf() },
        credentials: "same-origin",
      });
      const data = await response.json().catch(() => ({}));
      if (response.status === 401 && data.login_url) {
        window.location.assign(data.login_url);
        return;
      }
      if (!response.ok) throw new Error(String(response.status));
      setToggle(form, data.on === undefined ? wanted : data.on);
    } catch (error) {
      form.submit(); // fall back to the plain form post
    } finally {
      button.disabled = false;
    }
  }

  function setToggle(form, on) {
    const button = form.querySelector("button");
    form.classList.toggle("on", on);
    form.elements.on.value = on ? "0" : "1";
    button.textContent = on ? form.dataset.labelOn : form.dataset.labelOff;
    button.classList.toggle("secondary", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }

  document.addEventListener("submit", (event) => {
    // A visitor's button is a GET form to log in: it is left to the browser.
    const form = event.target.closest("form.toggle[method=post]");
    if (!form) return;
    event.preventDefault();
    submitToggle(form);
  });

  // --- Selection and the side panel ------------------------------------------
  const rows = () => Array.from(document.querySelectorAll("[data-paper-list] [data-paper]"));
  let selected = null;

  function select(row) {
    if (!row) return;
    if (selected) {
      selected.classList.remove("selected");
      selected.removeAttribute("aria-current");
    }
    selected = row;
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
    const panel = document.getElementById("paper-panel");
    const source = row.querySelector("template.panel-source");
    if (panel && source) {
      panel.replaceChildren(source.content.cloneNode(true));
      panel.hidden = false;
    }
  }

  function move(step) {
    const list = rows();
    if (!list.length) return;
    const index = list.indexOf(selected);
    const next = index < 0 ? 0 : Math.min(Math.max(index + step, 0), list.length - 1);
    select(list[next]);
  }

  document.addEventListener("click", (event) => {
    const row = event.target.closest("[data-paper-list] [data-paper]");
    if (row && !event.target.closest("a, button, input")) select(row);
  });

  // --- Keys ------------------------------------------------------------------
  const typing = (target) =>
    target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const dialog = document.getElementById("keys");
    if (dialog && dialog.open) return; // the dialog handles Esc itself
    switch (event.key) {
      case "j":
      case "J":
        move(1);
        break;
      case "k":
      case "K":
        move(-1);
        break;
      case "Enter":
        if (!selected || event.target.closest("a, button")) return;
        window.location.assign(selected.dataset.url);
        break;
      case "s":
      case "S": {
        const form = selected && selected.querySelector("form.toggle[data-kind=save]");
        if (!form) return;
        if (form.method === "post") submitToggle(form);
        else form.submit();
        break;
      }
      case "/": {
        const search = document.getElementById("site-search");
        if (!search) return;
        search.focus();
        break;
      }
      case "?":
        if (dialog) dialog.showModal();
        break;
      default:
        return;
    }
    event.preventDefault();
  });
})();
