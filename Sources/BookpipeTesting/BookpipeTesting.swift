// BookpipeTesting: see DESIGN.md §3.
