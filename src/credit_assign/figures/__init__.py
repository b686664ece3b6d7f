"""Figures' shared look (style): the paper's widths, text sizes and palette, and the
save that stamps each PNG with what it was drawn from. Each figure is a module of its
study's room (credit_assign.studies.<study>)."""
