// A valid shared library that is not an op pack: it lacks both entry points.
extern "C" __attribute__((visibility("default"))) int unit_not_a_pack() { return 42; }
