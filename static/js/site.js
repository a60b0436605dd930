// Momentum's few behaviours, on top of pages that work without JavaScript:
// follow/save and thumbs up/down buttons submit in place, and the keyboard
// moves through papers.
"use strict";

(function () {
  // The keys' hints show only where the keys work.
  document.documentElement.classList.add("js");

  const csrf = () => {
    const input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  };

  // --- Follow / save buttons -------------------------------------------------
  // While a form's request is on its way it takes no other (a double click; a
  // second S waits, pressToggle). Marked busy rather than disabled: a disabled
  // button drops the keyboard's focus to the page, where the next Enter opens
  // the paper.
  function claim(form) {
    if (form.dataset.busy) return false;
    form.dataset.busy = "1";
    form.setAttribute("aria-busy", "true");
    return true;
  }

  function release(form) {
    delete form.dataset.busy;
    form.removeAttribute("aria-busy");
  }

  // A form posted in place: its JSON answer, or a Failure saying why there is
  // none. "unreached": no answer in time, or the server failed (the page stays,
  // unchanged, and says so: the same press tries again); "page": an answer
  // that is not the one asked for (a refusal, a Wi-Fi sign-in page, a
  // redirect), which the plain form post then shows; "left": off to log in.
  const TIMEOUT_MS = 15000;

  class Failure extends Error {}

  // Aborts a request after TIMEOUT_MS (AbortSignal.timeout where the browser
  // has it: Safari before 16 does not).
  function deadline() {
    if (AbortSignal.timeout) return AbortSignal.timeout(TIMEOUT_MS);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), TIMEOUT_MS);
    return controller.signal;
  }

  async function post(form, body) {
    const signal = deadline();
    let response;
    try {
      response = await fetch(form.action, {
        method: "POST",
        body,
        headers: { Accept: "application/json", "X-CSRFToken": csrf() },
        credentials: "same-origin",
        redirect: "manual",
        signal,
      });
    } catch (error) {
      throw new Failure("unreached");
    }
    if (response.status >= 500) throw new Failure("unreached");
    const type = response.headers.get("Content-Type") || "";
    const data = type.startsWith("application/json")
      ? await response.json().catch(() => null)
      : null;
    if (response.status === 401 && data && data.login_url) {
      window.location.assign(data.login_url);
      throw new Failure("left");
    }
    if (!response.ok || !data) throw new Failure("page");
    return data;
  }

  // After a failed post: say so in place, or show the page the server meant.
  function failed(form, error, plainPost) {
    if (error.message === "unreached") {
      announce(form, "Momentum could not be reached, nothing changed; try again", true);
    } else if (error.message !== "left") {
      plainPost();
    }
  }

  async function submitToggle(form) {
    if (!claim(form)) return;
    form.dataset.asked = form.elements.on.value;
    let again = false;
    try {
      const data = await post(form, new FormData(form));
      if (typeof data.on !== "boolean") throw new Failure("page");
      setToggle(form, data.on);
      announce(form, (TOLD[form.dataset.kind] || TOLD.other)[data.on ? 0 : 1]);
      // S pressed again meanwhile asked for the other state (pressToggle).
      again = form.dataset.wanted === form.elements.on.value;
    } catch (error) {
      failed(form, error, () => form.submit());
    } finally {
      delete form.dataset.wanted;
      release(form);
    }
    if (again) submitToggle(form);
  }

  // S on a paper whose save is on its way (S, S: saved, then the reader
  // changed their mind) is kept, not dropped as a second click is: the state
  // the reader asked for last is posted once the first answers.
  function pressToggle(form) {
    if (!form.dataset.busy) return submitToggle(form);
    const asked = form.dataset.wanted || form.dataset.asked;
    form.dataset.wanted = asked === "1" ? "0" : "1";
  }

  // What a toggle did, said after it (announce).
  const TOLD = {
    save: ["Saved", "No longer saved"],
    follow: ["Following", "No longer following"],
    "follow-author": ["Following", "No longer following"],
    other: ["On", "Off"],
  };

  // Say what a button did in place to a screen reader: a key (S, +, -) may
  // have pressed one that has no focus. Named by its paper, or the page. A
  // failure is shown to everyone too, until the next thing said (or
  // dismissFailure), and said at once (role=alert, as the pages' own errors).
  // The same failure again says how many tries: the same text set again is
  // neither seen nor read out, and the reader could not tell the press was
  // tried.
  function announce(form, what, failure = false) {
    const status = document.getElementById("status-message");
    if (!status) return;
    const holder = form.closest("[data-paper], [data-page-paper], .card, li") || document;
    const title =
      holder.querySelector(".paper-title, h1, h2, h3") || holder.querySelector("a");
    const said = title ? `${what}: ${title.textContent.trim()}` : what;
    const again = failure && status.dataset.said === said;
    const tries = again ? Number(status.dataset.tries) + 1 : 1;
    status.dataset.said = said;
    status.dataset.tries = String(tries);
    status.setAttribute("role", failure ? "alert" : "status");
    status.textContent = tries > 1 ? `Tried ${tries} times: ${said}` : said;
    status.classList.toggle("visually-hidden", !failure);
    status.classList.toggle("failure", failure);
  }

  // A failure shown stays until the reader moves on (J, K) or presses Esc: it
  // names a paper they have left, over the bottom of the rows J brings up.
  function dismissFailure() {
    const status = document.getElementById("status-message");
    if (!status || !status.classList.contains("failure")) return;
    status.classList.remove("failure");
    status.classList.add("visually-hidden");
    status.setAttribute("role", "status");
    status.textContent = "";
    delete status.dataset.said;
  }

  function setToggle(form, on) {
    const button = form.querySelector("button");
    const was = form.classList.contains("on");
    form.classList.toggle("on", on);
    form.elements.on.value = on ? "0" : "1";
    // The label is the button's first text; a name hidden after it stays.
    button.firstChild.nodeValue = on ? form.dataset.labelOn : form.dataset.labelOff;
    button.classList.toggle("secondary", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
    if (form.dataset.kind === "follow" && was !== on) countFollower(on ? 1 : -1);
    if (form.dataset.kind === "follow") feedReady();
    if (form.dataset.kind === "save" && was !== on) countSaved(on ? 1 : -1);
  }

  // The Saved page's count, in its heading and its "Export all": a paper
  // unsaved there stays listed (S saves it again), but no longer counts.
  function countSaved(step) {
    document.querySelectorAll("[data-saved-count]").forEach((count) => {
      const n = Math.max(Number(count.textContent.replace(/\D/g, "")) + step, 0);
      count.textContent = n.toLocaleString("en-US");
    });
  }

  // An empty feed's suggested topics, followed in place: the feed has papers
  // to show now, which a reload shows (it said "You don't follow any topic").
  function feedReady() {
    const suggested = document.querySelector("[data-suggested-topics]");
    if (!suggested) return;
    const any = suggested.querySelector("form.toggle.on") !== null;
    document.querySelector("[data-feed-ready]").hidden = !any;
    document.querySelector("[data-feed-empty]").hidden = any;
  }

  // The topic page's "128 followers", kept in step with its follow button.
  function countFollower(step) {
    const count = document.getElementById("follower-count");
    if (!count) return;
    const n = Math.max(Number(count.dataset.followers) + step, 0);
    count.dataset.followers = String(n);
    count.textContent = `${n} follower${n === 1 ? "" : "s"}`;
  }

  document.addEventListener("submit", (event) => {
    // A visitor's button is a GET form to log in: it is left to the browser.
    const form = event.target.closest("form.toggle[method=post]");
    if (!form) return;
    event.preventDefault();
    submitToggle(form);
  });

  // --- Thumbs up / down ------------------------------------------------------
  // One form per paper; each button posts what it does (rating=up, down, or
  // clear when it is the one pressed), and the answer says the rating now.
  async function submitRating(form, value) {
    if (!claim(form)) return;
    form.dataset.expected = value === "clear" ? "" : value;
    let again = null;
    try {
      const body = new FormData(form);
      body.set("rating", value);
      const data = await post(form, body);
      if (!("rating" in data)) throw new Failure("page");
      setRating(form, data.rating);
      const told = { up: "Thumbs up", down: "Thumbs down" };
      announce(form, told[data.rating] || "Rating cleared");
      // + or - pressed again meanwhile asked for another rating (rate).
      const wanted = form.dataset.wanted;
      if (wanted !== undefined && wanted !== (data.rating || "")) {
        again = wanted || "clear";
      }
    } catch (error) {
      failed(form, error, () => {
        // The plain form post, with the button's own value.
        const rating = document.createElement("input");
        rating.type = "hidden";
        rating.name = "rating";
        rating.value = value;
        form.append(rating);
        form.submit();
      });
    } finally {
      delete form.dataset.wanted;
      release(form);
    }
    if (again) submitRating(form, again);
  }

  function setRating(form, rating) {
    form.classList.remove("up", "down");
    if (rating) form.classList.add(rating);
    form.querySelectorAll("button[data-rating]").forEach((button) => {
      const pressed = button.dataset.rating === rating;
      button.value = pressed ? "clear" : button.dataset.rating;
      button.setAttribute("aria-pressed", pressed ? "true" : "false");
    });
  }

  // + or - on a paper whose rating is on its way is kept, as S is
  // (pressToggle): the rating asked for last is posted once the first answers.
  function rate(form, rating) {
    const button = form.querySelector(`button[data-rating=${rating}]`);
    // A visitor's: to log in and back.
    if (form.method !== "post") return form.requestSubmit(button);
    if (!form.dataset.busy) return submitRating(form, button.value);
    const from = form.dataset.wanted ?? form.dataset.expected;
    form.dataset.wanted = from === rating ? "" : rating;
  }

  document.addEventListener("submit", (event) => {
    const form = event.target.closest("form.rating[method=post]");
    if (!form || !event.submitter) return;
    event.preventDefault();
    submitRating(form, event.submitter.value);
  });

  // --- Selection, the side panel and the drawer ------------------------------
  // Every list of papers is a [data-paper-list] of [data-paper] rows. The
  // selection is remembered in the page's history entry, so Back returns to the
  // row that was opened; turning the page with J/K goes through sessionStorage.
  const ROW = "[data-paper-list] [data-paper]";
  // A paper's own page: the keys act on it until the reader moves into a list
  // on it (its similar papers) with J or the focus.
  const PAGE_PAPER = "[data-page-paper]";
  const PENDING = "momentum:select";
  const rows = () => Array.from(document.querySelectorAll(ROW));
  // Below this width the side panel is hidden (site.css) and a row's own
  // "Abstract" drawer shows the paper instead.
  const narrow = window.matchMedia("(max-width: 800px)");
  // A touch screen (a phone) has no keys to act on a row selected for them,
  // as site.css hides their hints.
  const touchOnly = window.matchMedia("(hover: none) and (pointer: coarse)");
  let selected = null;
  let opened = null; // the drawer the selection opened, closed when it moves on

  function select(row, { focus = false, scroll = false, open = false } = {}) {
    if (!row) return;
    if (selected) {
      selected.classList.remove("selected");
      selected.removeAttribute("aria-current");
    }
    selected = row;
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    if (focus) row.focus({ preventScroll: true });
    showInPanel(row);
    const drawer = open && narrow.matches;
    const top = row.getBoundingClientRect().top;
    if (drawer) openDrawer(row);
    // After the drawers move (the last one closes above, this one opens): on a
    // phone the row, open, may be taller than the screen, so its title goes
    // to the top rather than its end to the bottom. A row tapped stays where
    // it was, under the finger, however tall the abstract that closed above.
    if (scroll) row.scrollIntoView({ block: drawer ? "start" : "nearest" });
    else if (drawer) window.scrollBy(0, row.getBoundingClientRect().top - top);
    remember(row);
  }

  // Browsers limit how often a page may change its history entry (a held J
  // key would pass that), so the selection is written once it settles, or at
  // once when the reader is about to leave.
  let rememberTimer = 0;
  function remember(row, now = false) {
    clearTimeout(rememberTimer);
    const write = () =>
      history.replaceState({ ...history.state, paper: row.dataset.paper }, "");
    if (now) write();
    else rememberTimer = setTimeout(write, 300);
  }

  // The side panel shows the selected paper: its title and what its drawer
  // holds (the row carries it once, for the drawer on phones and the panel).
  function showInPanel(row) {
    const panel = document.getElementById("paper-panel");
    const source = row.querySelector(".panel-source");
    if (!panel || !source) return;
    const title = document.createElement("h2");
    title.className = "panel-title";
    title.textContent = row.querySelector(".paper-title a").textContent;
    const details = Array.from(source.children, (child) => child.cloneNode(true));
    panel.replaceChildren(details[0], title, ...details.slice(1));
    panel.hidden = false;
  }

  function openDrawer(row) {
    const drawer = row.querySelector("details.drawer");
    if (opened && opened !== drawer) opened.open = false;
    if (drawer && !drawer.open) {
      drawer.open = true;
      opened = drawer;
    }
  }

  // By the keyboard: past the last row to the next page, before the first to
  // the previous page's last row.
  function move(step) {
    const list = rows();
    if (!list.length) return;
    const index = list.indexOf(selected);
    // K on a paper's page before any J: the paper itself, not its first row.
    if (index < 0 && step < 0 && document.querySelector(PAGE_PAPER)) {
      return backToPagePaper();
    }
    const next = index < 0 ? 0 : index + step;
    if (next >= list.length) return turnPage("next", "first");
    if (next < 0 && document.querySelector(PAGE_PAPER)) return backToPagePaper();
    if (next < 0) return turnPage("prev", "last");
    select(list[next], { focus: true, scroll: true, open: true });
  }

  function deselect() {
    if (!selected) return;
    selected.classList.remove("selected");
    selected.removeAttribute("aria-current");
    selected = null;
  }

  function backToPagePaper() {
    deselect();
    const paper = document.querySelector(PAGE_PAPER);
    paper.focus({ preventScroll: true });
    paper.scrollIntoView({ block: "start" });
  }

  // What S, + and - act on: the selected row, else the page's own paper.
  const keyTarget = () => selected || document.querySelector(PAGE_PAPER);

  function turnPage(rel, which) {
    const link = document.querySelector(`.pagination a[rel=${rel}]`);
    if (!link) return;
    // Back comes to the row J or K left from, not the last one that settled.
    if (selected) remember(selected, true);
    sessionStorage.setItem(PENDING, JSON.stringify({ url: link.href, which }));
    window.location.assign(link.href);
  }

  // On load: the row a page turn asked for, else the one this history entry
  // remembers (Back), else the one the address names (#paper-<id>, where a
  // Save posted without JavaScript or after logging in comes back), else the
  // first, but on a touch screen, where it would stand highlighted for no
  // reason (a key there, J, selects the first row). Only a page turn takes the
  // focus (the reader is moving with the keys); nothing scrolls but to a
  // remembered or named row.
  function selectOnLoad() {
    const list = rows();
    if (!list.length) return;
    const pending = JSON.parse(sessionStorage.getItem(PENDING) || "null");
    sessionStorage.removeItem(PENDING);
    if (pending && pending.url === window.location.href) {
      const row = pending.which === "last" ? list[list.length - 1] : list[0];
      select(row, { focus: !typing(document.activeElement), scroll: true });
      return;
    }
    const remembered = history.state && history.state.paper;
    const named = decodeURIComponent(window.location.hash.slice(1));
    const row =
      (remembered && list.find((r) => r.dataset.paper === remembered)) ||
      (named && list.find((r) => r.id === named));
    if (row) select(row, { scroll: true });
    else if (!document.querySelector(PAGE_PAPER) && !touchOnly.matches) select(list[0]);
  }

  // The row a control belongs to: the one it is in, or the one beside it in
  // their wrapper (the Saved page's tick box).
  const rowOf = (element) =>
    element.closest(ROW) ||
    element.closest("[data-row-controls]")?.querySelector(ROW) ||
    null;

  // Tabbing to a row's title or buttons selects it, and back to the page's own
  // paper gives the keys to it: they act on the paper in focus, not on one
  // selected out of sight.
  document.addEventListener("focusin", (event) => {
    if (!event.target.closest) return;
    const row = rowOf(event.target);
    if (row && row !== selected) select(row);
    else if (!row && event.target.closest(PAGE_PAPER)) deselect();
  });

  document.addEventListener("click", (event) => {
    const row = event.target.closest(ROW);
    if (!row) return;
    // A click on the row's title or buttons selects it too, so Back comes back
    // to it; only a click on the row itself takes the focus and opens it.
    const control = event.target.closest("a, button, input, summary, label");
    select(row, { focus: !control, open: !control });
    remember(row, true);
  });

  // --- Keys ------------------------------------------------------------------
  // Inputs that take keys; a tick box or a button does not (J after ticking a
  // paper on the Saved page moves on).
  const NOT_TYPED = ["checkbox", "radio", "button", "submit", "reset", "image", "file"];
  const typing = (target) =>
    Boolean(target) &&
    (target.isContentEditable ||
      ["TEXTAREA", "SELECT"].includes(target.tagName) ||
      (target.tagName === "INPUT" && !NOT_TYPED.includes(target.type)));

  // Esc in the header's search gives the keys back to the selected row (or the
  // page's paper): after a / pressed by mistake, or a click there, the next J
  // or S was typed into the box until the reader clicked or tabbed out. What
  // was typed is the browser's to keep or clear (Chromium clears it).
  function leaveSearch(search) {
    const back = keyTarget();
    if (back) back.focus({ preventScroll: true });
    else search.blur();
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape" && event.target.id === "site-search") {
      return leaveSearch(event.target);
    }
    if (typing(event.target)) return;
    const dialog = document.getElementById("keys");
    if (dialog && dialog.open) return; // the dialog handles Esc itself
    switch (event.key) {
      case "j":
      case "J":
        dismissFailure();
        move(1);
        break;
      case "k":
      case "K":
        dismissFailure();
        move(-1);
        break;
      case "Escape":
        dismissFailure();
        break;
      case "Enter":
        // On a link, button or drawer toggle, Enter is theirs.
        if (!selected || event.target.closest("a, button, summary")) return;
        remember(selected, true);
        window.location.assign(selected.dataset.url);
        break;
      case "s":
      case "S": {
        const target = keyTarget();
        const form = target && target.querySelector("form.toggle[data-kind=save]");
        if (!form) return;
        if (event.repeat) break; // held down: one press
        if (form.method === "post") pressToggle(form);
        else form.submit();
        break;
      }
      case "+":
      case "=": // + without Shift
      case "-": {
        const target = keyTarget();
        const form = target && target.querySelector("form.rating");
        if (!form) return;
        if (event.repeat) break; // held down: one press
        rate(form, event.key === "-" ? "down" : "up");
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

  // --- Seen: the feed's rows the reader had on screen ----------------------
  // A row whose title stayed in view (SEEN_RATIO of it) for SEEN_AFTER_MS
  // while the page was visible is reported to the server (data-seen-url),
  // which marks it seen on later visits: a page's rows below the fold, never
  // scrolled to, stay new, and so do those of a tab in the background. Reports
  // go in batches, and as the page is left or hidden. Without JavaScript
  // nothing is marked.
  const SEEN_RATIO = 0.95;
  const SEEN_AFTER_MS = 1000;
  const SEEN_BATCH_MS = 3000;

  function watchSeen() {
    const list = document.querySelector("[data-seen-url]");
    if (!list || !("IntersectionObserver" in window)) return;
    const unseen = new Set(list.querySelectorAll("[data-paper] .paper-title"));
    const waiting = new Map(); // title in view -> its timer
    const unsent = new Set(); // arXiv ids
    let batch = null;
    const send = () => {
      clearTimeout(batch);
      batch = null;
      if (!unsent.size) return;
      const body = new FormData();
      body.append("csrfmiddlewaretoken", csrf());
      unsent.forEach((paper) => body.append("paper", paper));
      unsent.clear();
      navigator.sendBeacon(list.dataset.seenUrl, body);
    };
    const observer = new IntersectionObserver(
      (entries) => {
        entries.forEach(({ target, intersectionRatio }) => {
          clearTimeout(waiting.get(target));
          waiting.delete(target);
          if (intersectionRatio < SEEN_RATIO || document.hidden) return;
          const timer = setTimeout(() => {
            waiting.delete(target);
            unseen.delete(target);
            observer.unobserve(target);
            unsent.add(target.closest("[data-paper]").dataset.paper);
            batch = batch || setTimeout(send, SEEN_BATCH_MS);
          }, SEEN_AFTER_MS);
          waiting.set(target, timer);
        });
      },
      { threshold: [0, SEEN_RATIO] },
    );
    // Observed anew, a title's first entry says whether it is in view now.
    const observeAll = () =>
      unseen.forEach((title) => {
        observer.unobserve(title);
        observer.observe(title);
      });
    observeAll();
    window.addEventListener("pagehide", send);
    document.addEventListener("visibilitychange", () => {
      if (document.hidden) {
        waiting.forEach((timer) => clearTimeout(timer));
        waiting.clear();
        send();
      } else {
        observeAll(); // the rows in view count from now
      }
    });
  }

  watchSeen();

  // --- The digest's time zone: the browser's -------------------------------
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  // Sign-up keeps it, so the first digest comes at the reader's own hour
  // (accounts.forms.SignupExtras; UTC without it).
  const signupZone = document.querySelector("form input[type=hidden][name=time_zone]");
  if (signupZone && !signupZone.value) signupZone.value = browserZone;
  // Settings offer it where the digest's is still UTC and the browser's is not
  // (a reader who signed up without it); saving the form keeps it.
  const zoneChoice = document.querySelector("select[name=time_zone]");
  // The list holds zones by today's names; a browser may give an older one
  // (Chromium's Asia/Calcutta), which the site takes too (data-also-valid).
  const alsoValid = (zoneChoice?.dataset.alsoValid || "").split(" ");
  if (zoneChoice && alsoValid.includes(browserZone)) {
    zoneChoice.add(new Option(browserZone, browserZone));
  }
  const known = zoneChoice && [...zoneChoice.options].some((o) => o.value === browserZone);
  if (known && zoneChoice.value === "UTC" && browserZone !== "UTC") {
    const offer = document.createElement("p");
    offer.className = "meta zone-offer";
    offer.setAttribute("role", "status"); // what "Use it" did is said
    const use = document.createElement("button");
    use.type = "button";
    use.className = "secondary small";
    use.textContent = "Use it";
    use.addEventListener("click", () => {
      zoneChoice.value = browserZone;
      offer.textContent = `Set to ${browserZone}: save to keep it.`;
      zoneChoice.focus(); // the button is gone: the focus goes to what it set
    });
    offer.append(`Your browser's time zone is ${browserZone}. `, use);
    zoneChoice.after(offer);
  }

  selectOnLoad();
})();
