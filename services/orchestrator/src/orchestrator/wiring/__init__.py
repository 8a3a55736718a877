"""The composition root: builds every adapter once and hands the core its ports."""
