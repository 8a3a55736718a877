"""Exports of answers, conversations and research reports (Markdown, HTML, PDF, JSON, BibTeX,
RIS), run bundles and their offline replay. See docs/exports.md."""
