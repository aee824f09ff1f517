#include <iostream>

#include "apps/commands.h"

int main(int argc, char** argv) {
  return weft::runCli(argc, argv, std::cout, std::cerr);
}
