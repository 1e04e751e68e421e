/* The module's C part: the plc client (plc/plc.c), compiled as C by juce_add_module and the Projucer. */
#include "plc/plc.c"
