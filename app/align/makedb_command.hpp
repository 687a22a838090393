// `swgpu makedb DB.fa PREFIX`: writes PREFIX.swdb, a memory-mappable database that `swgpu align` reads in place of
// the FASTA file (io/align/database_file.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "app/command.hpp"

namespace swgpu::app {

class makedb_command : public command {
public:
    explicit makedb_command(CLI::App& app);

private:
    int run(const std::string& command_line) override;
    void run_files(std::vector<io::named_file>& outputs, std::vector<io::named_file>& inputs) override;
    std::string source_, prefix_, seqtype_ = "auto";
    bool skip_bad_ = false, quiet_ = false;
};

}  // namespace swgpu::app
