"""Export renderers that need a process (Chromium for PDF)."""
