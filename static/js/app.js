// certprep's page behaviour. Loaded as a static file: the CSP allows no inline script.
// Everything here enhances pages that already work without JavaScript.
"use strict";

(function () {
  document.documentElement.classList.add("js");

  // ---- Countdown -------------------------------------------------------------------
  // The server sends the seconds left; the page counts down on a monotonic clock
  // (performance.now), so changing the computer's clock changes nothing, and every
  // save resyncs it with the server's figure.
  const WARNINGS = [
    [300, "5 minutes left."],
    [60, "1 minute left."],
  ];
  let endsAt = null;
  let warned = new Set();
  let autoSubmitting = false;

  function setRemaining(seconds) {
    endsAt = performance.now() + Math.max(0, Number(seconds)) * 1000;
    // Warnings already passed stay announced; resyncing never repeats one.
    for (const [limit] of WARNINGS) if (seconds > limit) warned.delete(limit);
  }

  function format(seconds) {
    const total = Math.max(0, Math.ceil(seconds));
    const h = Math.floor(total / 3600);
    const m = Math.floor((total % 3600) / 60);
    const s = total % 60;
    const mm = String(m).padStart(2, "0");
    const ss = String(s).padStart(2, "0");
    return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
  }

  function tick() {
    const timer = document.getElementById("timer");
    if (!timer || endsAt === null) return;
    const left = (endsAt - performance.now()) / 1000;
    document.getElementById("timer-value").textContent = format(left);
    timer.classList.toggle("is-low", left <= 300);
    timer.classList.toggle("is-critical", left <= 60);
    for (const [limit, text] of WARNINGS) {
      if (left <= limit && left > 0 && !warned.has(limit)) {
        warned.add(limit);
        const alert = document.getElementById("timer-alert");
        if (alert) alert.textContent = text;
        const banner = document.getElementById("time-banner");
        if (banner) {
          banner.textContent = text;
          banner.hidden = false;
          banner.classList.toggle("is-critical", limit <= 60);
        }
        // A hidden timer shows itself again for the last five minutes.
        timer.classList.remove("is-hidden");
        const toggle = document.getElementById("timer-toggle");
        if (toggle) {
          toggle.setAttribute("aria-pressed", "false");
          toggle.textContent = "Hide timer";
        }
      }
    }
    if (left <= 0) autoSubmit();
  }

  // ---- The exam room: every action bound to the slot it was made on -------------------
  // Each pick, strike-out, flag, check and move is queued with the slot that was on screen
  // when the learner made it, and with that slot's whole state (picks, strike-outs, flag),
  // so a request can be retried or repeated without changing its meaning. One request is in
  // flight at a time, in the order the learner acted; a move's answer is drawn only when no
  // later move waits, so nothing the learner did is drawn over. A failure keeps the request
  // at the head of the queue and retries it, doubling the wait once per failure (≤ 30 s).
  const REQUEST_TIMEOUT = 8000;
  const MAX_RETRY_DELAY = 30000;
  const queue = [];
  let inFlight = null;
  let retryDelay = 1000;
  let retryTimer = null;
  let failure = null; // {position, message} of the request that is failing
  let everSaved = false;
  let leaving = false;
  let redirectAfterQueue = null; // Review: go once everything queued after it is stored
  let sessionEnded = false; // a check finished the practice: later 409s are expected

  function mainForm() {
    return document.getElementById("attempt-main");
  }

  function shownPosition() {
    const form = mainForm();
    return form ? Number(form.dataset.position) : null;
  }

  function csrfToken(form) {
    const input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function slotState(form) {
    // What the learner sees on this slot now: the whole answer, not a change to it.
    const state = { choice: [], struck: [], flag: null, certainty: null };
    for (const input of form.querySelectorAll("input[name=choice]")) {
      if (input.checked && !input.disabled) state.choice.push(input.value);
    }
    const sure = form.querySelector("input[name=certainty]:checked:not(:disabled)");
    if (sure) state.certainty = sure.value;
    for (const row of form.querySelectorAll(".choice-row.is-struck")) state.struck.push(row.dataset.position);
    const flag = form.querySelector(".flag-button");
    if (flag) state.flag = flag.getAttribute("aria-pressed") === "true" ? "on" : "off";
    return state;
  }

  function requestBody(entry) {
    const body = new URLSearchParams();
    body.append("csrfmiddlewaretoken", entry.csrf);
    if (!entry.checked) {
      body.append("answer", "1");
      for (const value of entry.state.choice) body.append("choice", value);
      if (entry.state.certainty) body.append("certainty", entry.state.certainty);
    }
    body.append("struck_sent", "1");
    for (const value of entry.state.struck) body.append("struck", value);
    if (entry.state.flag) body.append("flag", entry.state.flag);
    if (entry.walk) body.append("walk", entry.walk);
    if (entry.go) body.append("go", entry.go);
    if (entry.check) body.append("check", "1");
    return body;
  }

  function enqueue(form, action) {
    const walkInput = form.querySelector("input[name=walk]");
    const entry = {
      position: Number(form.dataset.position),
      url: form.action,
      csrf: csrfToken(form),
      checked: form.dataset.checked === "1",
      walk: walkInput ? walkInput.value : "",
      state: slotState(form),
      go: action.go || null,
      check: Boolean(action.check),
    };
    entry.isMove = Boolean(entry.go || entry.check);
    // A plain save of the same slot still waiting at the tail of the queue is overtaken by
    // this one: both carry the whole state, so only the newer needs to go. Only the tail:
    // merging past a queued move would let the move's older state land after the newer.
    const last = queue[queue.length - 1];
    if (!entry.isMove && last && last !== inFlight && !last.isMove && last.position === entry.position) {
      last.state = entry.state;
      showStatus();
      return;
    }
    queue.push(entry);
    showStatus();
    pump();
  }

  function pump() {
    if (inFlight || retryTimer || leaving) return;
    if (!queue.length) {
      if (redirectAfterQueue) {
        leaving = true;
        window.location.assign(redirectAfterQueue);
      }
      return;
    }
    inFlight = queue[0];
    send(inFlight);
    showStatus();
  }

  async function send(entry) {
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), REQUEST_TIMEOUT);
    let response = null;
    let text = "";
    try {
      response = await fetch(entry.url, {
        method: "POST",
        body: requestBody(entry),
        headers: { "HX-Request": "true", "X-CSRFToken": entry.csrf },
        credentials: "same-origin",
        signal: controller.signal,
        redirect: "manual",
      });
      text = await response.text();
    } catch (error) {
      response = null;
    } finally {
      clearTimeout(timeout);
    }
    if (leaving) return;
    settle(entry, response, text);
  }

  function settle(entry, response, text) {
    if (response && response.ok && response.headers.get("X-Answer-Saved") === "1") {
      queue.shift();
      inFlight = null;
      failure = null;
      retryDelay = 1000;
      everSaved = true;
      const remaining = response.headers.get("HX-Trigger");
      if (remaining) {
        try {
          setRemaining(JSON.parse(remaining)["clock-sync"].remaining);
        } catch (error) {
          /* a save without a clock: nothing to resync */
        }
      }
      if (response.headers.get("X-Attempt-Finished") === "1") sessionEnded = true;
      const redirect = response.headers.get("HX-Redirect");
      if (redirect) {
        // Anything the learner did after pressing Review is still sent before leaving.
        redirectAfterQueue = redirect;
        showStatus();
        pump();
        return;
      }
      if (entry.isMove) {
        const laterMove = queue.some((queued) => queued.isMove);
        if (!laterMove) drawSlot(text, response.headers.get("HX-Push-Url"), entry);
      } else {
        updateNavigatorItem(text);
      }
      showStatus();
      pump();
      return;
    }
    if (response && response.status === 409 && sessionEnded) {
      // The last check ended the session (its results link is on the page): nothing is lost.
      queue.length = 0;
      inFlight = null;
      showStatus();
      return;
    }
    if (response && response.status === 409) {
      // The attempt has ended (time is up, or another tab submitted it): nothing more can save.
      queue.length = 0;
      inFlight = null;
      failure = { position: entry.position, message: text };
      showStatus();
      const results = response.headers.get("X-Results-Url") || document.getElementById("attempt").dataset.resultsUrl;
      leaving = true;
      setTimeout(() => window.location.assign(results), 1500);
      return;
    }
    if (response && response.status === 422) {
      // Refused input the learner can put right: say why on the question, drop the request.
      queue.shift();
      inFlight = null;
      if (entry.check && shownPosition() === entry.position) unlockAnswer(mainForm());
      if (shownPosition() === entry.position) {
        const limit = document.getElementById("pick-limit");
        const holder = document.createElement("div");
        holder.innerHTML = text;
        if (limit) {
          limit.textContent = holder.textContent.trim();
          limit.classList.add("is-refused");
        }
      }
      showStatus();
      pump();
      return;
    }
    if (response && (response.status === 401 || response.status === 403 || (response.ok && !response.headers.get("X-Answer-Saved")) || response.type === "opaqueredirect")) {
      // The session ended: retrying cannot help until the learner logs in again.
      queue.length = 0;
      inFlight = null;
      failure = { position: entry.position, message: "Your session has ended. Reload the page and log in again; then make this change again." };
      showStatus();
      return;
    }
    if (response && response.status === 400) {
      queue.shift();
      inFlight = null;
      failure = { position: entry.position, message: text || "The server refused this request." };
      showStatus();
      pump();
      return;
    }
    // No answer, a timeout or a server error: keep it at the head and try again later.
    inFlight = null;
    failure = { position: entry.position, message: null };
    const seconds = Math.round(retryDelay / 1000);
    showStatus(seconds);
    retryTimer = setTimeout(() => {
      retryTimer = null;
      pump();
    }, retryDelay);
    retryDelay = Math.min(retryDelay * 2, MAX_RETRY_DELAY);
  }

  function pendingFor(position) {
    return queue.some((entry) => entry.position === position);
  }

  function showStatus(retrySeconds) {
    const element = document.getElementById("save-status");
    const more = document.getElementById("save-detail");
    if (!element) return;
    const here = shownPosition();
    let text = "";
    let detail = "";
    let state = "";
    if (autoSubmitting) {
      text = "Time is up";
      detail = queue.length ? "Saving your last answers, then submitting…" : "Submitting your saved answers…";
    } else if (failure && !failure.message && inFlight) {
      text = "Saving…";
      state = "saving";
      detail = "Connection problem: trying again…";
    } else if (failure) {
      text = "Not saved";
      state = "failed";
      const which = failure.position === here ? "" : ` (question ${failure.position})`;
      detail = failure.message
        ? failure.message
        : `Connection problem${which}: retrying${retrySeconds ? ` in ${retrySeconds} s` : ""}. Keep this page open.`;
    } else if (pendingFor(here)) {
      text = "Saving…";
      state = "saving";
    } else if (everSaved) {
      text = "Saved";
      state = "saved";
      const others = [...new Set(queue.map((entry) => entry.position))];
      if (others.length) detail = `Saving question ${others.join(", ")}…`;
    }
    element.textContent = text;
    element.classList.toggle("is-saved", state === "saved");
    element.classList.toggle("is-failed", state === "failed");
    if (more) more.textContent = detail;
    // No move waits any more (it failed for good, or the session ended): no button is busy.
    if (!queue.some((entry) => entry.isMove)) {
      const form = mainForm();
      if (form) for (const busy of form.querySelectorAll("[aria-busy]")) busy.removeAttribute("aria-busy");
    }
    // How many requests wait: read by the browser tests to know when the page is idle.
    const attempt = document.getElementById("attempt");
    if (attempt) attempt.dataset.queued = String(queue.length);
  }

  function updateNavigatorItem(html) {
    const holder = document.createElement("div");
    holder.innerHTML = html;
    for (const item of holder.querySelectorAll("[hx-swap-oob]")) {
      const current = document.getElementById(item.id);
      if (!current) continue;
      item.removeAttribute("hx-swap-oob");
      // The navigator's "current" mark belongs to the slot on screen, not the one saved.
      const isShown = current.classList.contains("current");
      item.classList.toggle("current", isShown);
      if (isShown) item.setAttribute("aria-current", "step");
      else item.removeAttribute("aria-current");
      current.replaceWith(item);
    }
  }

  function drawSlot(html, url, entry) {
    const form = mainForm();
    if (!form) return;
    const holder = document.createElement("div");
    holder.innerHTML = html;
    const fresh = holder.querySelector("#attempt-main");
    if (!fresh) return;
    const moved = Number(fresh.dataset.position) !== entry.position;
    // Changes to this slot still waiting in the queue are newer than what the server drew:
    // show them, so the page and the next save agree with what the learner did.
    const newer = [...queue].reverse().find((queued) => queued.position === Number(fresh.dataset.position));
    if (newer) applyState(fresh, newer.state);
    form.replaceWith(fresh);
    foldTallExhibits(fresh);
    if (url && moved) history.pushState({}, "", url);
    document.title = document.title.replace(/^Question \d+/, `Question ${fresh.dataset.position}`);
    // The new question's heading (or the verdict after a check) takes focus and is
    // scrolled into view below the sticky bar; a screen reader reads it out.
    measureStickyBars();
    const target = entry.check && fresh.querySelector("#checked-heading") ? fresh.querySelector("#checked-heading") : fresh.querySelector("#question-heading");
    if (target) {
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: "start" });
    }
  }

  function applyState(form, state) {
    if (form.dataset.checked !== "1") {
      for (const input of form.querySelectorAll("input[name=choice]")) {
        input.checked = state.choice.includes(input.value);
        input.closest("label").classList.toggle("is-selected", input.checked);
      }
      for (const input of form.querySelectorAll("input[name=certainty]")) {
        if (state.certainty) input.checked = input.value === state.certainty;
      }
    }
    for (const row of form.querySelectorAll(".choice-row")) {
      const struck = state.struck.includes(row.dataset.position);
      if (row.classList.contains("is-struck") !== struck) setStruck(row, struck);
    }
    const flag = form.querySelector(".flag-button");
    if (flag && state.flag) flag.setAttribute("aria-pressed", String(state.flag === "on"));
    updatePickCount(form);
  }

  // Once Check answer is pressed the answer is locked, before the server says so: a pick
  // made meanwhile would be refused, and the flags and moves queued with it lost.
  function lockAnswer(form) {
    form.dataset.checked = "1";
    for (const input of form.querySelectorAll("input[name=choice], input[name=certainty]")) input.disabled = true;
  }

  function unlockAnswer(form) {
    if (!form) return;
    delete form.dataset.checked;
    for (const input of form.querySelectorAll("input[name=certainty]")) input.disabled = false;
    for (const row of form.querySelectorAll(".choice-row")) {
      row.querySelector("input[name=choice]").disabled = row.classList.contains("is-struck");
    }
  }

  // A pick or a strike-out is a save; buttons are moves, flags or checks.
  document.addEventListener("change", (event) => {
    const input = event.target;
    const form = input.form;
    if (form !== mainForm() || (input.name !== "choice" && input.name !== "certainty")) return;
    const limit = document.getElementById("pick-limit");
    if (limit) {
      limit.textContent = "";
      limit.classList.remove("is-refused");
    }
    for (const label of form.querySelectorAll("label.choice")) {
      label.classList.toggle("is-selected", label.querySelector("input").checked);
    }
    enqueue(form, {});
  });

  function toggleStrike(form, row) {
    setStruck(row, !row.classList.contains("is-struck"));
    updatePickCount(form);
    enqueue(form, {});
  }

  function setStruck(row, struck) {
    const input = row.querySelector("input[name=choice]");
    const button = row.querySelector(".strike-button");
    const letter = input.dataset.letter;
    row.classList.toggle("is-struck", struck);
    if (struck && input.checked) {
      input.checked = false;
      input.closest("label").classList.remove("is-selected");
    }
    if (row.closest("form").dataset.checked !== "1") input.disabled = struck;
    if (button) {
      button.setAttribute("aria-pressed", String(struck));
      button.title = `${struck ? "Restore" : "Strike out"} ${letter}`;
      button.querySelector("[aria-hidden]").textContent = struck ? "↺" : "✕";
      button.querySelector(".visually-hidden").textContent = `${struck ? "Restore" : "Strike out"} ${letter}`;
    }
  }

  function updatePickCount(form) {
    const count = document.getElementById("pick-count");
    if (!count) return;
    const choose = Number(form.dataset.choose);
    const picked = form.querySelectorAll("input[name=choice]:checked").length;
    count.textContent = `${picked} of ${choose} chosen${picked && picked < choose ? ": incomplete" : ""}`;
    count.classList.toggle("is-incomplete", picked < choose);
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    const form = mainForm();
    if (!button || !form || button.form !== form || button.type !== "submit") return;
    event.preventDefault();
    if (button.disabled) return;
    if (button.name === "strike") {
      toggleStrike(form, button.closest(".choice-row"));
    } else if (button.name === "flag") {
      const on = button.getAttribute("aria-pressed") !== "true";
      button.setAttribute("aria-pressed", String(on));
      const item = document.getElementById(`nav-${form.dataset.position}`);
      if (item) item.classList.toggle("flagged", on);
      enqueue(form, {});
    } else if (button.name === "check") {
      if (!form.querySelector("input[name=choice]:checked")) {
        const limit = document.getElementById("pick-limit");
        if (limit) {
          limit.textContent = "Pick an answer before checking it.";
          limit.classList.add("is-refused");
        }
        return;
      }
      enqueue(form, { check: true });
      lockAnswer(form);
    } else if (button.name === "go") {
      if (button.value === "stay") enqueue(form, {});
      else {
        // Busy until the question it goes to is drawn (which replaces this button).
        button.setAttribute("aria-busy", "true");
        enqueue(form, { go: button.value });
      }
    }
  });

  // Enter in the form: save and stay, as the hidden default button does without script.
  document.addEventListener("submit", (event) => {
    if (event.target === mainForm()) {
      event.preventDefault();
      enqueue(event.target, {});
    }
  });

  // Leaving with saves still queued (a header link, the back button, closing the tab):
  // each slot's latest state goes out with keepalive, which outlives the page.
  window.addEventListener("pagehide", () => {
    if (!queue.length || sessionEnded) return;
    leaving = true;
    const latest = new Map();
    for (const entry of queue) latest.set(entry.position, entry);
    for (const entry of latest.values()) {
      const body = requestBody({ ...entry, go: null, check: false });
      fetch(entry.url, {
        method: "POST",
        body,
        keepalive: true,
        credentials: "same-origin",
        headers: { "HX-Request": "true", "X-CSRFToken": entry.csrf },
      }).catch(() => {});
    }
  });

  // Back and Forward between questions: load the question the address now names (what is
  // still queued goes out with keepalive as the page is left).
  window.addEventListener("popstate", () => {
    const form = mainForm();
    if (!form) return;
    // A jump to #navigator is a popstate too: only a change of question reloads.
    const shown = new URL(form.dataset.url, window.location.href);
    if (shown.pathname + shown.search !== window.location.pathname + window.location.search) {
      window.location.assign(window.location.pathname + window.location.search);
    }
  });


  // ---- Multiple select: never more than "Choose N" -----------------------------------
  // Capture phase, so a refused pick never reaches the queue and is never sent.
  document.addEventListener(
    "change",
    (event) => {
      const input = event.target;
      const form = input.form;
      if (form !== mainForm() || input.type !== "checkbox") return;
      const choose = Number(form.dataset.choose);
      const picked = form.querySelectorAll("input[name=choice]:checked").length;
      const limit = document.getElementById("pick-limit");
      if (picked > choose) {
        input.checked = false;
        event.stopImmediatePropagation();
        if (limit) limit.textContent = `This question takes ${choose}: unpick one first.`;
        return;
      }
      updatePickCount(form);
    },
    true,
  );

  // ---- Keyboard: 1–9 and 0 (A–E on short questions) choose, N / P, F flag, K check, X strike
  document.addEventListener("keydown", (event) => {
    const attempt = document.getElementById("attempt");
    if (!attempt || attempt.dataset.shortcuts !== "on") return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.matches("input[type=text], input[type=search], textarea, select, [contenteditable]")) return;
    if (document.querySelector("dialog[open]")) return;
    const form = mainForm();
    if (!form) return;
    // Only single characters are shortcuts: "ArrowDown", "Backspace" and friends are not.
    if (event.key.length !== 1) return;
    const key = event.key.toLowerCase();
    if (key === "x") {
      const row = target.closest && target.closest(".choice-row");
      if (row && form.contains(row) && row.querySelector(".strike-button")) {
        event.preventDefault();
        toggleStrike(form, row);
        const input = row.querySelector("input");
        if (!input.disabled) input.focus();
        else row.querySelector(".strike-button").focus();
      }
      return;
    }
    const button = form.querySelector(`button[data-key="${key}"]:not([disabled])`);
    if (button) {
      event.preventDefault();
      button.click();
      return;
    }
    const input = form.querySelector(`input[name=choice][data-keys~="${key}"]`);
    if (input && !input.disabled) {
      event.preventDefault();
      input.click();
      input.focus();
    }
  });

  // ---- Timer: hide and show; it comes back for the last 5 minutes ---------------------
  document.addEventListener("click", (event) => {
    if (event.target.id !== "timer-toggle") return;
    const timer = document.getElementById("timer");
    const hidden = !timer.classList.contains("is-hidden");
    timer.classList.toggle("is-hidden", hidden);
    event.target.setAttribute("aria-pressed", String(hidden));
    event.target.textContent = hidden ? "Show timer" : "Hide timer";
  });

  // ---- Submit behind a confirmation ---------------------------------------------------
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form.id !== "submit-form") return;
    const dialog = document.getElementById("confirm-submit");
    if (!dialog || document.getElementById("submit-confirmed").value === "1") return;
    event.preventDefault();
    dialog.showModal();
  });

  document.addEventListener("click", (event) => {
    if (event.target.id === "confirm-ok") {
      document.getElementById("submit-confirmed").value = "1";
      document.getElementById("confirm-submit").close();
      document.getElementById("submit-form").requestSubmit();
    } else if (event.target.id === "confirm-cancel") {
      document.getElementById("confirm-submit").close();
    }
  });

  // ---- At zero: wait for queued saves, then submit -----------------------------------
  // Nothing in flight: submit at once. Otherwise wait for the queue, but at most 9 s (a
  // request times out at 8 s), well inside the 30 s the server still accepts saves.
  function autoSubmit() {
    if (autoSubmitting) return;
    const form = document.getElementById("auto-submit");
    if (!form) return;
    autoSubmitting = true;
    const element = document.getElementById("save-status");
    if (element) element.textContent = "Time is up";
    const more = document.getElementById("save-detail");
    if (more) more.textContent = queue.length ? "Saving your last answers, then submitting…" : "Submitting your saved answers…";
    const startedWaiting = performance.now();
    (function waitForSaves() {
      if (queue.length && performance.now() - startedWaiting < 9000) {
        if (retryTimer && !inFlight) {
          clearTimeout(retryTimer);
          retryTimer = null;
          pump();
        }
        setTimeout(waitForSaves, 100);
        return;
      }
      leaving = true;
      form.submit();
    })();
  }

  // The sticky bars' heights, for the CSS that keeps a scrolled-to heading clear of them.
  function measureStickyBars() {
    const bar = document.querySelector(".attempt-bar");
    const actions = document.getElementById("question-actions");
    if (!bar) return;
    const root = document.documentElement.style;
    root.setProperty("--attempt-bar-height", `${bar.offsetHeight}px`);
    const actionsStick = actions && getComputedStyle(actions).position === "sticky" && getComputedStyle(actions).top !== "auto";
    root.setProperty("--sticky-offset", `${bar.offsetHeight + (actionsStick ? actions.offsetHeight : 0) + 8}px`);
  }
  window.addEventListener("resize", measureStickyBars);

  // An exhibit taller than half the screen folds behind "Show exhibit", so the question
  // and its choices start on the first screen; one tap shows it.
  function foldTallExhibits(root) {
    for (const fold of root.querySelectorAll("details.exhibit-fold[open]:not(.is-measured)")) {
      fold.classList.add("is-measured");
      const figure = fold.querySelector(".exhibit");
      if (figure && figure.offsetHeight > window.innerHeight * 0.5) {
        fold.classList.add("is-tall");
        fold.open = false;
      }
    }
  }

  function init() {
    foldTallExhibits(document);
    measureStickyBars();
    // Sign-up: the account starts in the browser's own time zone.
    const zone = document.querySelector("input[data-browser-time-zone]");
    if (zone && !zone.value) {
      try {
        zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
      } catch (error) {
        /* no Intl: the server's default, UTC, applies */
      }
    }
    const timer = document.getElementById("timer");
    const toggle = document.getElementById("timer-toggle");
    if (toggle) toggle.hidden = false;
    if (timer && endsAt === null) {
      const seconds = Number(timer.dataset.remaining);
      setRemaining(seconds);
      // A warning already behind us when the page opens is not news: announce only
      // the thresholds the countdown crosses while the learner is here.
      for (const [limit] of WARNINGS) if (seconds <= limit) warned.add(limit);
    }
    tick();
  }

  init();
  setInterval(tick, 250);
})();

// ---- A jump to a question inside a closed group opens the group ----------------------
// (Chromium opens it by itself; this covers the browsers that do not.)
(function () {
  function reveal() {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (!target) return;
    let group = target.closest("details:not([open])");
    if (!group) return;
    while (group) {
      group.open = true;
      group = group.parentElement && group.parentElement.closest("details:not([open])");
    }
    target.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  reveal();
})();

// ---- htmx requests outside the exam room: busy while they run, and said when they fail ----
// Results filters, the practice builder's count and bookmark notes swap in place through
// htmx. On a slow link the element that asked shows it is busy; a request that is cut off,
// times out or fails on the server swaps nothing (htmx's default), and the page says so
// beside it, so a note that did not reach the server never looks saved. Polls (the jobs
// page's progress) retry by themselves and say nothing.
(function () {
  const MESSAGES = {
    network: "Could not reach certprep: nothing changed. Check your connection and try again.",
    timeout: "certprep took too long to answer: nothing changed. Try again.",
    forbidden: "Your session may have ended: nothing changed. Reload the page and try again.",
    server: "Something went wrong on certprep's side: nothing changed. Try again in a moment.",
  };

  function isPoll(element) {
    return (element.getAttribute("hx-trigger") || "").includes("every");
  }

  // Where the message goes: after the form or the filter bar that asked.
  function anchorOf(element) {
    return element.closest("form, nav, section, .card") || element;
  }

  function clear(anchor) {
    const next = anchor.nextElementSibling;
    if (next && next.classList.contains("request-failed")) next.remove();
  }

  function report(element, kind) {
    if (!element || isPoll(element)) return;
    const anchor = anchorOf(element);
    clear(anchor);
    const message = document.createElement("p");
    message.className = "request-failed";
    message.setAttribute("role", "alert");
    message.textContent = MESSAGES[kind];
    anchor.insertAdjacentElement("afterend", message);
  }

  document.addEventListener("htmx:beforeRequest", (event) => {
    const element = event.detail.elt;
    if (isPoll(element)) return;
    clear(anchorOf(element));
    anchorOf(element).setAttribute("aria-busy", "true");
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    const element = event.detail.elt;
    const anchor = anchorOf(element);
    if (anchor.isConnected) anchor.removeAttribute("aria-busy");
  });
  document.addEventListener("htmx:sendError", (event) => report(event.detail.elt, "network"));
  document.addEventListener("htmx:timeout", (event) => report(event.detail.elt, "timeout"));
  document.addEventListener("htmx:responseError", (event) => {
    const status = event.detail.xhr ? event.detail.xhr.status : 0;
    report(event.detail.elt, status === 403 ? "forbidden" : status === 0 ? "network" : "server");
  });
})();
