/* replay_main.c - main() for a fuzz harness where libFuzzer is not used (gcc builds, CI without
 * clang): feeds every file named on the command line, and every file in every folder named,
 * to LLVMFuzzerTestOneInput once. A crash or abort fails the ctest test that runs it. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t room = 1 << 16, size = 0;
    uint8_t *data = malloc(room);
    for (;;) {
        if (data == NULL) {
            fclose(f);
            return 1;
        }
        size += fread(data + size, 1, room - size, f);
        if (size < room)
            break;
        room *= 2;
        data = realloc(data, room);
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

int main(int argc, char **argv) {
    int files = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        struct stat info;
        if (stat(argv[i], &info) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            errors++;
        } else if (S_ISDIR(info.st_mode)) {
            DIR *dir = opendir(argv[i]);
            struct dirent *entry;
            while (dir != NULL && (entry = readdir(dir)) != NULL) {
                if (entry->d_name[0] == '.')
                    continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], entry->d_name);
                errors += replay_file(path);
                files++;
            }
            if (dir != NULL)
                closedir(dir);
        } else {
            errors += replay_file(argv[i]);
            files++;
        }
    }
    printf("replayed %d inputs, %d unreadable\n", files, errors);
    return errors == 0 && files > 0 ? 0 : 1;
}
