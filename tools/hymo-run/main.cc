// hymo-run: loads hymo plans and runs them; compiles (through hymo-opt) and trains.
#include <iostream>

#include "commands.h"
#include "hymo/rt/status.h"

namespace {

// CLI11 reads integers with strtoll's base 0, so "010" would be 8 and "0x10" 16. Every integer
// option of every command goes through this first: a decimal integer (an optional sign, digits)
// with its leading zeros dropped, anything else refused by name.
void decimal_integers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string full = opt->get_type_name();  // (with its validators' descriptions after ':')
    const std::string type = full.substr(0, full.find(':'));
    if (type != "INT" && type != "UINT") continue;
    opt->transform(CLI::Validator(
        [](std::string& v) -> std::string {
          size_t i = (!v.empty() && (v[0] == '+' || v[0] == '-')) ? 1 : 0;
          if (i == v.size()) return "expected a decimal integer, got '" + v + "'";
          for (size_t k = i; k < v.size(); ++k)
            if (v[k] < '0' || v[k] > '9') return "expected a decimal integer, got '" + v + "'";
          size_t z = i;
          while (z + 1 < v.size() && v[z] == '0') ++z;
          v.erase(i, z - i);
          return std::string();
        },
        "", "decimal"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) decimal_integers(*sub);
}

}  // namespace

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
  decimal_integers(app);
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
