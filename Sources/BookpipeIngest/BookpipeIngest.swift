// BookpipeIngest: see DESIGN.md §3.
