// The metastore's view of `s3://` locations in the HMS tests.
//
// Hive 2.3's metastore opens a table's file system to check (and create) its directory when a
// table is created or moved; the S3 file system (hadoop-aws) is not in pyspark's wheel and no
// registry this project uses serves it. This file system answers those checks from a local
// directory (`-Dmetacache.s3.root`, one subdirectory per bucket), so tables and partitions can
// be recorded at `s3://bucket/...` through the metastore's real Thrift API. It holds no data:
// the data files are on SeaweedFS, and metacache lists them there through S3.
//
// Loaded with -Dfs.s3.impl=metacache.test.LocalS3FileSystem (as a Hadoop configuration key).

package metacache.test;

import java.io.File;
import java.io.IOException;
import java.net.URI;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

public class LocalS3FileSystem extends RawLocalFileSystem {
    private URI uri;
    private final String root = System.getProperty("metacache.s3.root", "/tmp/metacache-s3");

    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        uri = URI.create(name.getScheme() + "://" + name.getAuthority());
    }

    @Override
    public URI getUri() {
        // RawLocalFileSystem's constructor asks before initialize() names the bucket.
        return uri != null ? uri : URI.create("s3://unset");
    }

    @Override
    public String getScheme() {
        return "s3";
    }

    @Override
    public File pathToFile(Path path) {
        checkPath(path);
        if (!path.isAbsolute()) {
            path = new Path(getWorkingDirectory(), path);
        }
        return new File(root + "/" + uri.getAuthority() + path.toUri().getPath());
    }
}
