// The log-in form: posts the account and password as JSON, then reloads the page, which the server
// now answers with the dashboard. The password goes nowhere else and is not kept.
"use strict";

function showError(text) {
  const box = document.getElementById("login-error");
  box.textContent = text;
  box.hidden = false;
}

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("login-form");
  if (sessionStorage.getItem("dataclay-expired")) {
    sessionStorage.removeItem("dataclay-expired");
    showError("Your session expired; log in again.");
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = document.getElementById("login-button");
    button.disabled = true;
    try {
      const answer = await fetch("/api/v1/login", {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({user: form.user.value, password: form.password.value}),
        credentials: "same-origin",
      });
      if (answer.ok) {
        window.location.reload();
        return;
      }
      const body = await answer.json().catch(() => ({}));
      form.password.value = "";
      showError(body.error || `log-in failed (HTTP ${answer.status})`);
    } catch (e) {
      showError(`the dashboard does not answer: ${e.message}`);
    } finally {
      button.disabled = false;
    }
  });
});
