package io.mailroom.templates;

import io.pebbletemplates.pebble.error.LoaderException;
import io.pebbletemplates.pebble.loader.Loader;

import java.io.Reader;
import java.io.StringReader;

/**
 * Pebble's view of {@link TemplateFiles}: names are relative paths ({@code _layouts/html.peb},
 * {@code receipt/html.peb}); a relative {@code ./x.peb} resolves against the including
 * file's folder. Files come from the snapshot, never from disk.
 */
final class FilesLoader implements Loader<String> {

    private final TemplateFiles files;

    FilesLoader(TemplateFiles files) {
        this.files = files;
    }

    @Override
    public Reader getReader(String name) {
        return new StringReader(files.read(name)
                .orElseThrow(() -> new LoaderException(null, "no template file '" + name + "'")));
    }

    @Override
    public void setCharset(String charset) {
        // always UTF-8
    }

    @Override
    public void setPrefix(String prefix) {
        // names are relative paths
    }

    @Override
    public void setSuffix(String suffix) {
        // names carry their extension
    }

    @Override
    public String resolveRelativePath(String relativePath, String anchorPath) {
        if (relativePath.startsWith("./") && anchorPath != null) {
            int slash = anchorPath.lastIndexOf('/');
            return (slash < 0 ? "" : anchorPath.substring(0, slash + 1)) + relativePath.substring(2);
        }
        return relativePath;
    }

    @Override
    public String createCacheKey(String name) {
        return name;
    }

    @Override
    public boolean resourceExists(String name) {
        return files.exists(name);
    }
}
