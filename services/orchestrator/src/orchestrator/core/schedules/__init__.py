"""Research that runs itself: saved questions with a schedule (docs/schedules.md)."""
