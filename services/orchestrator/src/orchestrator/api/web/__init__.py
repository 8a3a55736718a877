"""The web UI: static files served at ``/`` (no build step; see static/vendor/vendor.json)."""
