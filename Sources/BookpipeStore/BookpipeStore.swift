// BookpipeStore: see DESIGN.md §3.
