// hymo-run: loads hymo plans and runs them; compiles (through hymo-opt) and trains.
#include <iostream>

#include "commands.h"
#include "hymo/rt/status.h"

int main(int argc, char** argv) {
  CLI::App app{"hymo-run: load and run hymo plans (docs/plan-format.md)"};
  app.name("hymo-run");
  bool version = false;
  app.add_flag("--version", version, "print the version and build features (blas, cuda, nccl)");
  hymo_run::add_inspect_command(app);
  hymo_run::add_exec_command(app);
  hymo_run::add_compile_command(app);
  hymo_run::add_train_command(app);
  hymo_run::add_eval_command(app);
  hymo_run::add_report_command(app);
  hymo_run::add_sample_command(app);
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const hymo::rt::Error& e) {
    std::cerr << "hymo-run: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "hymo-run: internal error: " << e.what() << "\n";
    return 2;
  }
  if (version) {
    std::cout << hymo_run::version_text();
    return 0;
  }
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return 1;
  }
  return 0;
}
