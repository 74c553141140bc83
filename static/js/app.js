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
      }
    }
    if (left <= 0) autoSubmit();
  }

  // ---- Saves: pending count, status, retries ----------------------------------------
  let pending = 0;
  let failedForm = null;
  let retryDelay = 1000;
  let retryTimer = null;

  function status(text, detail, state) {
    const element = document.getElementById("save-status");
    if (element) {
      element.textContent = text;
      element.classList.toggle("is-saved", state === "saved");
      element.classList.toggle("is-failed", state === "failed");
    }
    const more = document.getElementById("save-detail");
    if (more) more.textContent = detail || "";
  }

  function scheduleRetry(form) {
    failedForm = form;
    clearTimeout(retryTimer);
    const seconds = Math.round(retryDelay / 1000);
    status("Not saved", `Connection problem: retrying in ${seconds} s. Keep this page open.`, "failed");
    retryTimer = setTimeout(() => {
      if (failedForm && document.body.contains(failedForm)) htmx.trigger(failedForm, "change");
    }, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 8000);
  }

  function isAnswerForm(element) {
    return element && element.id === "attempt-main";
  }

  document.addEventListener("htmx:beforeRequest", (event) => {
    if (!isAnswerForm(event.detail.elt)) return;
    pending += 1;
    status("Saving…", "", "saving");
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    if (!isAnswerForm(event.detail.elt)) return;
    pending = Math.max(0, pending - 1);
    const xhr = event.detail.xhr;
    if (event.detail.successful && xhr && xhr.getResponseHeader("X-Answer-Saved") === "1") {
      failedForm = null;
      retryDelay = 1000;
      clearTimeout(retryTimer);
      status("Saved", "", "saved");
      return;
    }
    if (event.detail.successful) {
      // A 200 that is not our confirmation (e.g. a login page after a redirect): not saved.
      failedForm = null;
      status("Not saved", "Your session has ended. Reload the page and log in again; then pick this answer again.", "failed");
      return;
    }
    if (xhr && xhr.status === 409) {
      // The attempt has ended (time is up, or another tab submitted it).
      failedForm = null;
      status("Not saved", xhr.responseText, "failed");
      const results = xhr.getResponseHeader("X-Results-Url") || document.getElementById("attempt").dataset.resultsUrl;
      setTimeout(() => window.location.assign(results), 1500);
      return;
    }
    if (xhr && xhr.status >= 400 && xhr.status < 500) {
      // Refused input (e.g. too many choices): say why; retrying would not help.
      failedForm = null;
      status("Not saved", xhr.responseText, "failed");
      return;
    }
    scheduleRetry(event.detail.elt);
  });

  document.addEventListener("htmx:sendError", (event) => {
    if (isAnswerForm(event.detail.elt)) scheduleRetry(event.detail.elt);
  });

  document.body.addEventListener("clock-sync", (event) => setRemaining(event.detail.remaining));

  // ---- Multiple select: never more than "Choose N" -----------------------------------
  // Capture phase, so a refused pick never reaches htmx and is never sent.
  document.addEventListener(
    "change",
    (event) => {
      const input = event.target;
      const form = input.form;
      if (!isAnswerForm(form) || input.type !== "checkbox") return;
      const choose = Number(form.dataset.choose);
      const picked = form.querySelectorAll("input[name=choice]:checked").length;
      const limit = document.getElementById("pick-limit");
      if (picked > choose) {
        input.checked = false;
        event.stopPropagation();
        if (limit) limit.textContent = `This question takes ${choose}: unpick one first.`;
        return;
      }
      if (limit) limit.textContent = "";
      const count = document.getElementById("pick-count");
      if (count) {
        count.textContent = `${picked} of ${choose} chosen${picked && picked < choose ? ": incomplete" : ""}`;
        count.classList.toggle("is-incomplete", picked < choose);
      }
    },
    true,
  );

  document.addEventListener("change", (event) => {
    const input = event.target;
    if (!isAnswerForm(input.form)) return;
    for (const label of input.form.querySelectorAll("label.choice")) {
      label.classList.toggle("is-selected", label.querySelector("input").checked);
    }
  });

  // ---- Keyboard: A–E or 1–5 choose, N / P next / previous, F flag ---------------------
  document.addEventListener("keydown", (event) => {
    const attempt = document.getElementById("attempt");
    if (!attempt || attempt.dataset.shortcuts !== "on") return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.matches("input[type=text], input[type=search], textarea, select, [contenteditable]")) return;
    if (document.querySelector("dialog[open]")) return;
    const form = document.getElementById("attempt-main");
    if (!form) return;
    // Only single characters are shortcuts: "ArrowDown", "Backspace" and friends are not.
    if (event.key.length !== 1) return;
    const key = event.key.toLowerCase();
    const button = form.querySelector(`button[data-key="${key}"]:not([disabled])`);
    if (button) {
      event.preventDefault();
      button.click();
      return;
    }
    const choices = form.querySelectorAll("input[name=choice]:not([disabled])");
    let index = -1;
    if (/^[a-e]$/.test(key)) index = key.charCodeAt(0) - 97;
    else if (/^[1-5]$/.test(key)) index = Number(key) - 1;
    if (index >= 0 && index < choices.length) {
      event.preventDefault();
      choices[index].click();
      choices[index].focus();
    }
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

  // ---- At zero: wait for pending saves, then submit -----------------------------------
  function autoSubmit() {
    if (autoSubmitting) return;
    const form = document.getElementById("auto-submit");
    if (!form) return;
    autoSubmitting = true;
    status("Time is up", "Submitting your saved answers…", "saving");
    const startedWaiting = performance.now();
    (function waitForSaves() {
      // The server accepts saves for 30 s after the deadline; stop waiting before that.
      const stillSaving = pending > 0 || failedForm !== null;
      if (stillSaving && performance.now() - startedWaiting < 20000) {
        if (failedForm && pending === 0) htmx.trigger(failedForm, "change");
        setTimeout(waitForSaves, 250);
        return;
      }
      form.submit();
    })();
  }

  function init() {
    const timer = document.getElementById("timer");
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
