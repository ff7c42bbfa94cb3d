// A stand-in for libtrainsim_fitting_de.so from another build: same entry points, another
// interface number. fit_module_test.cpp checks that trainsim refuses it and says why.
extern "C" unsigned trainsim_fitting_de_abi() { return 999; }
extern "C" void trainsim_fitting_de_run() {}
