// The translation unit the view and GUI suites' precompiled headers (tests/CMakeLists.txt) are made for.
