"""The web dashboard on `whileai serve`: server-rendered pages behind a sign-in with the
account's key, charts drawn by a vendored Chart.js served from the package (no network)."""
